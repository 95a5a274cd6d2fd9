package integration

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iosched/iosched/helper/disklock"
)

// nobody is the unprivileged attacker of these tests.
var nobody = []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}

// asNobody runs argv as uid 65534 and returns its exit status.
func asNobody(t *testing.T, argv ...string) int {
	t.Helper()
	cmd := exec.Command(nobody[0], append(nobody[1:], argv...)...)
	cmd.Env = []string{baseEnv}
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("%q: %v", argv, err)
	return -1
}

// holdAsNobody starts `flock -x path` as uid 65534 around a sleep, waits
// until it holds the lock, and stops it (its whole process group, which
// it leads) when the test ends.
func holdAsNobody(t *testing.T, path string) {
	t.Helper()
	cmd := exec.Command(nobody[0], append(nobody[1:], "flock", "-x", path, "sh", "-c", "echo locked; exec sleep 60")...)
	cmd.Env = []string{baseEnv}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() {
		syscall.Kill(-pgid, syscall.SIGKILL)
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("flock -x %s as uid 65534: %q, %v", path, line, err)
	}
}

// timedSwitches makes n changes of d between kyber and none, by turns
// with `iosched set` and with the udev entry point on a change event, and
// returns each run's wall time.
func timedSwitches(t *testing.T, bin string, d *loopDev, n int) []time.Duration {
	t.Helper()
	udev := udevLink(t, bin)
	var times []time.Duration
	for i := 0; i < n; i++ {
		from, to := "none", "kyber"
		if active(t, d) == "kyber" {
			from, to = "kyber", "none"
		}
		argv, env := []string{bin, "set", d.Name, to}, []string(nil)
		if i%2 == 1 {
			argv, env = []string{udev}, udevEnv("change", "disk", d.Devpath, to)
		}
		start := time.Now()
		o := run(t, false, env, argv...)
		times = append(times, time.Since(start))
		if want := (got{0, d.Name + ": " + from + " -> " + to + "\n"}); o.got() != want {
			t.Fatalf("%q = %+v (stderr %q), want %+v", argv, o.got(), o.Stderr, want)
		}
	}
	return times
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestLockUnprivileged: no unprivileged process can delay or break an
// iosched run that must write, by taking an flock on the disk's sysfs
// queue/ directory (the lock iosched used to take) or by reaching the
// lock directory or its files.
func TestLockUnprivileged(t *testing.T) {
	b := setup(t, "setpriv", "flock")
	d := newLoop(t, "")
	force(t, d, "none")
	const rounds = 7
	base := timedSwitches(t, b.Static, d, rounds) // this also makes the lock directory

	t.Run("flock on queue dir", func(t *testing.T) {
		holdAsNobody(t, filepath.Dir(d.Sched))
		held := timedSwitches(t, b.Static, d, rounds)
		delay := median(held) - median(base)
		t.Logf("median of %d switches (set and udev by turns): %v without, %v with uid 65534 holding flock on %s: delay %v",
			rounds, median(base).Round(time.Microsecond), median(held).Round(time.Microsecond), filepath.Dir(d.Sched), delay.Round(time.Microsecond))
		if delay > 50*time.Millisecond {
			t.Errorf("uid 65534 delayed iosched by %v (median of %d), want at most 50ms", delay, rounds)
		}
	})

	t.Run("lock directory closed to others", func(t *testing.T) {
		dir := disklock.Default.Path
		lock := filepath.Join(dir, d.Name+".lock")
		var st syscall.Stat_t
		if err := syscall.Lstat(dir, &st); err != nil {
			t.Fatal(err)
		}
		if st.Uid != 0 || st.Mode&syscall.S_IFMT != syscall.S_IFDIR || st.Mode&0o7777 != 0o700 {
			t.Fatalf("%s: uid %d mode %#o, want a root directory with mode 0700", dir, st.Uid, st.Mode)
		}
		if _, err := os.Lstat(lock); err != nil {
			t.Fatalf("no lock file after the switches: %v", err)
		}
		for _, argv := range [][]string{
			{"flock", "-x", "-n", lock, "true"},
			{"flock", "-x", "-n", dir, "true"},
			{"sh", "-c", ": < " + lock},
			{"sh", "-c", ": > " + filepath.Join(dir, "other.lock")},
			{"mkdir", filepath.Join(dir, "x")},
			{"ln", "-s", "/tmp", filepath.Join(dir, "loop99.lock")},
			{"rm", "-f", lock},
			{"chmod", "777", dir},
		} {
			if code := asNobody(t, argv...); code == 0 {
				t.Errorf("uid 65534 ran %q with success", argv)
			}
		}
		if _, err := os.Lstat(lock); err != nil {
			t.Errorf("lock file after the attempts: %v", err)
		}
		timedSwitches(t, b.Static, d, 1)
	})

	// Whatever an unprivileged user can plant where the lock directory
	// would be (here in a world-writable directory standing in for /run)
	// is refused at once, and nothing is created through it.
	t.Run("planted", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			plant func(parent, path string)
		}{
			{"symlink to a directory of theirs", func(parent, path string) {
				asNobody(t, "mkdir", "-m", "0700", filepath.Join(parent, "theirs"))
				asNobody(t, "ln", "-s", filepath.Join(parent, "theirs"), path)
			}},
			{"symlink to a root directory", func(parent, path string) {
				asNobody(t, "ln", "-s", "/etc", path)
			}},
			{"directory of theirs, mode 0700", func(parent, path string) {
				asNobody(t, "mkdir", "-m", "0700", path)
			}},
			{"directory of theirs, mode 0777", func(parent, path string) {
				asNobody(t, "mkdir", "-m", "0777", path)
			}},
			{"root directory, mode 0755", func(parent, path string) {
				if err := os.Mkdir(path, 0o755); err != nil {
					t.Fatal(err)
				}
				os.Chmod(path, 0o755)
			}},
			{"file of theirs", func(parent, path string) {
				asNobody(t, "touch", path)
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				parent, err := os.MkdirTemp("", "iosched-run-")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(parent) })
				if err := os.Chmod(parent, 0o1777); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(parent, "iosched")
				tc.plant(parent, path)
				if _, err := os.Lstat(path); err != nil {
					t.Fatalf("nothing planted at %s: %v", path, err)
				}
				start := time.Now()
				unlock, err := disklock.Dir{Path: path, Owner: 0}.Lock(d.Name, disklock.Wait)
				took := time.Since(start)
				if err == nil {
					unlock()
					t.Fatalf("Lock through the planted %s succeeded", tc.name)
				}
				if !errors.Is(err, disklock.ErrUnsafe) || !strings.Contains(err.Error(), path) {
					t.Errorf("Lock = %v, want ErrUnsafe naming %s", err, path)
				}
				if took > 50*time.Millisecond {
					t.Errorf("Lock took %v to refuse, want at most 50ms", took)
				}
				for _, p := range []string{filepath.Join(parent, "theirs", d.Name+".lock"), "/etc/" + d.Name + ".lock"} {
					if _, err := os.Lstat(p); err == nil {
						t.Errorf("Lock created %s", p)
					}
				}
			})
		}
	})
}
