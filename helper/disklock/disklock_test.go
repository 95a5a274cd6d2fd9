package disklock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func testDir(t *testing.T) Dir {
	return Dir{Path: filepath.Join(t.TempDir(), "iosched"), Owner: os.Geteuid()}
}

func TestLockCreatesPrivateDir(t *testing.T) {
	d := testDir(t)
	old := unix.Umask(0o777) // the created modes must not depend on it
	unlock, err := d.Lock("loop3", time.Second)
	unix.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	st, err := os.Lstat(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Errorf("%s: mode %v, want a directory with mode 0700", d.Path, st.Mode())
	}
	fst, err := os.Lstat(filepath.Join(d.Path, "loop3.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if !fst.Mode().IsRegular() || fst.Mode().Perm()&0o077 != 0 {
		t.Errorf("lock file mode %v, want a regular file without group or other bits", fst.Mode())
	}
}

// TestLockExcludes: a second lock of the same disk waits for the first
// and fails after its wait; another disk is not held up; the lock is free
// again once released.
func TestLockExcludes(t *testing.T) {
	d := testDir(t)
	unlock, err := d.Lock("sda", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := d.Lock("sda", 100*time.Millisecond); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Errorf("second Lock(sda) = %v, want EWOULDBLOCK", err)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("second Lock(sda) gave up after %v, want it to wait 100ms", waited)
	}
	other, err := d.Lock("sdb", 0)
	if err != nil {
		t.Errorf("Lock(sdb) while sda is held: %v", err)
	} else {
		other()
	}
	done := make(chan error, 1)
	go func() {
		u, err := d.Lock("sda", 5*time.Second)
		if err == nil {
			u()
		}
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	unlock()
	if err := <-done; err != nil {
		t.Errorf("Lock(sda) after release: %v", err)
	}
}

// TestLockRefuses: whatever stands where the directory or a lock file
// would be and is not what Lock makes is refused, and nothing is created
// through it.
func TestLockRefuses(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, d Dir, elsewhere string)
	}{
		{"symlink to a directory", func(t *testing.T, d Dir, elsewhere string) {
			must(t, os.Mkdir(elsewhere, 0o700))
			must(t, os.Symlink(elsewhere, d.Path))
		}},
		{"dangling symlink", func(t *testing.T, d Dir, elsewhere string) {
			must(t, os.Symlink(elsewhere, d.Path))
		}},
		{"regular file", func(t *testing.T, d Dir, elsewhere string) {
			must(t, os.WriteFile(d.Path, nil, 0o600))
		}},
		{"mode 0755", func(t *testing.T, d Dir, elsewhere string) {
			must(t, os.Mkdir(d.Path, 0o700))
			must(t, os.Chmod(d.Path, 0o755))
		}},
		{"mode 1777", func(t *testing.T, d Dir, elsewhere string) {
			must(t, os.Mkdir(d.Path, 0o700))
			must(t, os.Chmod(d.Path, 0o1777))
		}},
		{"symlinked lock file", func(t *testing.T, d Dir, elsewhere string) {
			must(t, os.Mkdir(d.Path, 0o700))
			must(t, os.Symlink(filepath.Join(elsewhere, "x"), filepath.Join(d.Path, "sda.lock")))
			must(t, os.Mkdir(elsewhere, 0o700))
		}},
		{"fifo as lock file", func(t *testing.T, d Dir, elsewhere string) {
			must(t, os.Mkdir(d.Path, 0o700))
			must(t, unix.Mkfifo(filepath.Join(d.Path, "sda.lock"), 0o600))
		}},
		{"lock file readable by others", func(t *testing.T, d Dir, elsewhere string) {
			must(t, os.Mkdir(d.Path, 0o700))
			must(t, os.WriteFile(filepath.Join(d.Path, "sda.lock"), nil, 0o644))
			must(t, os.Chmod(filepath.Join(d.Path, "sda.lock"), 0o644))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := testDir(t)
			elsewhere := filepath.Join(filepath.Dir(d.Path), "elsewhere")
			tt.plant(t, d, elsewhere)
			unlock, err := d.Lock("sda", 50*time.Millisecond)
			if err == nil {
				unlock()
				t.Fatal("Lock succeeded")
			}
			if !errors.Is(err, ErrUnsafe) && !errors.Is(err, unix.ELOOP) {
				t.Errorf("Lock = %v, want ErrUnsafe or ELOOP", err)
			}
			if _, err := os.Lstat(filepath.Join(elsewhere, "sda.lock")); err == nil {
				t.Errorf("a lock file was created through the planted %s", tt.name)
			}
			if _, err := os.Lstat(filepath.Join(elsewhere, "x")); err == nil {
				t.Errorf("a file was created through the planted %s", tt.name)
			}
		})
	}
}

// TestLockRefusesOtherOwner needs root to give the directory away.
func TestLockRefusesOtherOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	for _, target := range []string{"dir", "file"} {
		d := Dir{Path: filepath.Join(t.TempDir(), "iosched"), Owner: 0}
		must(t, os.Mkdir(d.Path, 0o700))
		p := d.Path
		if target == "file" {
			p = filepath.Join(d.Path, "sda.lock")
			must(t, os.WriteFile(p, nil, 0o600))
		}
		must(t, os.Chown(p, 65534, 65534))
		if _, err := d.Lock("sda", 0); !errors.Is(err, ErrUnsafe) {
			t.Errorf("%s owned by 65534: Lock = %v, want ErrUnsafe", target, err)
		}
	}
}

func TestLockBadNames(t *testing.T) {
	d := testDir(t)
	for _, disk := range []string{"", ".", "..", "a/b", "../sda", "a\x00b"} {
		if u, err := d.Lock(disk, 0); err == nil {
			u()
			t.Errorf("Lock(%q) succeeded", disk)
		}
	}
	for _, p := range []string{"relative", "/"} {
		if u, err := (Dir{Path: p, Owner: os.Geteuid()}).Lock("sda", 0); err == nil {
			u()
			t.Errorf("Dir %q: Lock succeeded", p)
		}
	}
	entries, err := os.ReadDir(filepath.Dir(d.Path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("bad names created %v", entries)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
