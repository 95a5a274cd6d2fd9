package rulesaudit

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFixConcurrent runs pairs of --fix at once on one rules directory,
// each converting its own file: every run's record must be in the
// journal afterwards, or --undo could not put that file back.
func TestFixConcurrent(t *testing.T) {
	const pairs = 200
	lost := 0
	for i := 0; i < pairs; i++ {
		etc := t.TempDir()
		files := []string{filepath.Join(etc, "70-a.rules"), filepath.Join(etc, "71-b.rules")}
		for j, attr := range []string{"read_ahead_kb", "nr_requests"} {
			rule := `ACTION=="add|change", KERNEL=="sd*", ATTR{queue/` + attr + `}="128"` + "\n"
			if err := os.WriteFile(files[j], []byte(rule), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		errs := make([]error, len(files))
		for j, f := range files {
			wg.Add(1)
			go func() {
				defer wg.Done()
				plan, err := PlanFix(FixInput{Read: files, Fix: []string{f}, Target: etc})
				if err == nil {
					err = ApplyFix(etc, plan)
				}
				errs[j] = err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("pair %d: %v", i, err)
			}
		}
		m, err := ReadManifest(etc)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range m.Files {
			got = append(got, w.Path)
		}
		sort.Strings(got)
		if !cmp.Equal(files, got) {
			lost++
		}
	}
	t.Logf("%d concurrent pairs of --fix, %d with a lost record", pairs, lost)
	if lost > 0 {
		t.Errorf("%d of %d concurrent pairs of --fix lost a journal record", lost, pairs)
	}
}

// TestUndoKeepsOwnerModeLinks: a setuid, setgid file of another owner
// with a second name comes back as the same inode, every name sharing
// it, mode and owner as they were, nothing left in the directory.
func TestUndoKeepsOwnerModeLinks(t *testing.T) {
	root := t.TempDir()
	etc, lib := filepath.Join(root, "etc"), filepath.Join(root, "lib")
	for _, d := range []string{etc, lib} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := filepath.Join(etc, "70-tuning.rules")
	other := filepath.Join(lib, "tuning.rules")
	copyTestdata(t, "tuning.rules", f, 0o644)
	mode := os.FileMode(0o755)
	if os.Geteuid() == 0 {
		if err := os.Chown(f, 1234, 5678); err != nil {
			t.Fatal(err)
		}
		mode |= os.ModeSetuid | os.ModeSetgid
	}
	if err := os.Chmod(f, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(f, other); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, etc)
	fi0, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := PlanFix(FixInput{Read: []string{f}, Fix: []string{f}, Target: etc})
	if err != nil || len(plan) != 1 {
		t.Fatalf("PlanFix = %d changes, %v", len(plan), err)
	}
	if err := ApplyFix(etc, plan); err != nil {
		t.Fatal(err)
	}
	fixed, err := stateOf(OS, f)
	if err != nil {
		t.Fatal(err)
	}
	if want := before["70-tuning.rules"]; fixed.Mode != want.Mode || fixed.UID != want.UID || fixed.GID != want.GID {
		t.Errorf("after --fix: mode %v %d:%d, want %v %d:%d", fixed.Mode, fixed.UID, fixed.GID, want.Mode, want.UID, want.GID)
	}
	if _, err := Undo(etc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, snapshot(t, etc)); diff != "" {
		t.Errorf("after --undo (-want +got):\n%s", diff)
	}
	fi1, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	fo, err := os.Stat(other)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(fi0, fi1) || !os.SameFile(fi1, fo) || fi1.Sys().(*syscall.Stat_t).Nlink != 2 {
		t.Errorf("after --undo: %s is inode %d with %d names, %s inode %d; want one inode of 2 names as before",
			f, fi1.Sys().(*syscall.Stat_t).Ino, fi1.Sys().(*syscall.Stat_t).Nlink, other, fo.Sys().(*syscall.Stat_t).Ino)
	}
}

// TestForget: a file edited after --fix is kept by --undo and refused
// by --fix, each saying how to get out; --forget drops the record and
// --fix converts the edited file again.
func TestForget(t *testing.T) {
	etc := t.TempDir()
	f := filepath.Join(etc, "70-tuning.rules")
	copyTestdata(t, "tuning.rules", f, 0o644)
	in := FixInput{Read: []string{f}, Fix: []string{f}, Target: etc}
	plan, err := PlanFix(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := ApplyFix(etc, plan); err != nil {
		t.Fatal(err)
	}
	edited := `ACTION=="add|change", KERNEL=="sd*", ATTR{queue/read_ahead_kb}="4096"` + "\n"
	if err := os.WriteFile(f, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Undo(etc)
	if err != nil || len(res.Kept) != 1 {
		t.Fatalf("Undo = %+v, %v; want one file kept", res, err)
	}
	hint := "`iosched audit --undo --forget " + f + "`"
	if !containsAll(res.Kept[0], hint) {
		t.Errorf("Undo says %q, not %s", res.Kept[0], hint)
	}
	plan, err = PlanFix(in)
	if err != nil {
		t.Fatal(err)
	}
	err = CheckFix(etc, plan)
	if err == nil || !containsAll(err.Error(), hint) {
		t.Fatalf("CheckFix = %v; want a refusal naming %s", err, hint)
	}
	if err := ApplyFix(etc, plan); err == nil {
		t.Fatal("ApplyFix over an edited, recorded file succeeded")
	}
	if err := Forget(etc, f); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(f); err != nil || string(data) != edited {
		t.Errorf("after --forget: %q, %v; want the edit kept", data, err)
	}
	if err := ApplyFix(etc, plan); err != nil {
		t.Fatalf("ApplyFix after --forget: %v", err)
	}
	if _, err := Undo(etc); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(f); err != nil || string(data) != edited {
		t.Errorf("after --fix and --undo: %q, %v; want the edit", data, err)
	}
	if err := Forget(etc, f); err == nil {
		t.Error("Forget of a file with no record succeeded")
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
