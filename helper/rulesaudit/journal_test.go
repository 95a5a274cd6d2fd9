package rulesaudit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// faultFS is the real filesystem with one changing operation, the nth,
// failing; with sticky every one after it fails too, as when the disk
// fills up or the machine goes down mid-way.
type faultFS struct {
	FS
	n, calls int
	sticky   bool
}

var errInjected = errors.New("injected failure")

func (f *faultFS) step(op string) error {
	f.calls++
	if f.calls == f.n || f.sticky && f.calls > f.n {
		return fmt.Errorf("%s: %w", op, errInjected)
	}
	return nil
}

func (f *faultFS) WriteTemp(dir string, data []byte, mode fs.FileMode, uid, gid int) (string, error) {
	if err := f.step("write temp"); err != nil {
		return "", err
	}
	return f.FS.WriteTemp(dir, data, mode, uid, gid)
}

func (f *faultFS) SymlinkTemp(dir, target string, uid, gid int) (string, error) {
	if err := f.step("symlink temp"); err != nil {
		return "", err
	}
	return f.FS.SymlinkTemp(dir, target, uid, gid)
}

func (f *faultFS) Rename(from, to string) error {
	if err := f.step("rename"); err != nil {
		return err
	}
	return f.FS.Rename(from, to)
}

func (f *faultFS) Remove(name string) error {
	if err := f.step("remove"); err != nil {
		return err
	}
	return f.FS.Remove(name)
}

func (f *faultFS) SyncDir(dir string) error {
	if err := f.step("sync dir"); err != nil {
		return err
	}
	return f.FS.SyncDir(dir)
}

// snapshot is every entry of dir with its content, type, mode and owner.
func snapshot(t *testing.T, dir string) map[string]State {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]State{}
	for _, e := range ents {
		s, err := stateOf(OS, filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = s
	}
	return m
}

// fixTree is a system with three files to convert: one in /usr/lib
// (converted into a new file of /etc), a 0600 file of /etc (converted in
// place, mode and owner kept), and a symlink in /etc (replaced by a file,
// put back as the link), plus a manifest of an earlier --fix.
func fixTree(t *testing.T, withOld bool) (etc string, in FixInput) {
	t.Helper()
	root := t.TempDir()
	etc, lib := filepath.Join(root, "etc"), filepath.Join(root, "lib")
	for _, d := range []string{etc, lib} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyTestdata(t, "cachyos-style.rules", filepath.Join(lib, "60-ioschedulers.rules"), 0o644)
	copyTestdata(t, "tuning.rules", filepath.Join(etc, "70-tuning.rules"), 0o600)
	copyTestdata(t, "suse-style.rules", filepath.Join(lib, "suse.txt"), 0o644)
	if err := os.Symlink(filepath.Join(lib, "suse.txt"), filepath.Join(etc, "65-suse.rules")); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(filepath.Join(etc, "70-tuning.rules"), 1234, 5678); err != nil {
			t.Fatal(err)
		}
	}
	l := List([]string{etc, lib})
	in = FixInput{Read: l.Files, Fix: l.Files, Target: etc, Sys: root}
	if !withOld {
		return etc, in
	}
	old := Manifest{Files: []Written{{Path: filepath.Join(etc, "10-old.rules"), Source: "/x", SHA256: hash(nil), Prior: State{Kind: kindAbsent}}}}
	data, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(etc, ManifestName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return etc, in
}

func copyTestdata(t *testing.T, name, to string, mode fs.FileMode) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, mode); err != nil {
		t.Fatal(err)
	}
}

// TestFixFailsAtEveryStep fails each changing operation of --fix in turn:
// the system is as it was afterwards, or, when undoing failed too (every
// later operation failing), once --undo ran.
func TestFixFailsAtEveryStep(t *testing.T) {
	steps := 0
	for n := 1; ; n++ {
		for _, sticky := range []bool{false, true} {
			// Undo consumes the whole journal: an earlier --fix's
			// record is kept, byte for byte, only by a --fix that
			// undid itself.
			etc, in := fixTree(t, !sticky)
			before := snapshot(t, etc)
			plan, err := PlanFix(in)
			if err != nil || len(plan) != 3 {
				t.Fatalf("PlanFix = %d changes, %v; want 3", len(plan), err)
			}
			f := &faultFS{FS: OS, n: n, sticky: sticky}
			err = applyFix(f, etc, plan)
			if f.calls < n {
				if err != nil {
					t.Fatalf("applyFix with no failure: %v", err)
				}
				if n < 8 {
					t.Fatalf("only %d changing steps: the test reaches too little", n-1)
				}
				if _, err := undo(OS, etc); err != nil {
					t.Fatal(err)
				}
				// The earlier record is consumed too.
				delete(before, ManifestName)
				if diff := cmp.Diff(before, snapshot(t, etc)); diff != "" {
					t.Fatalf("after --fix and --undo (-want +got):\n%s", diff)
				}
				t.Logf("%d changing steps, each failed once and for good", steps)
				return
			}
			if !errors.Is(err, errInjected) {
				t.Fatalf("step %d (sticky %v) failed, applyFix = %v", n, sticky, err)
			}
			if sticky {
				if _, err := undo(OS, etc); err != nil {
					t.Fatalf("step %d failed for good, then undo: %v", n, err)
				}
			}
			if diff := cmp.Diff(before, snapshot(t, etc)); diff != "" {
				t.Errorf("step %d failed (sticky %v: %v): files changed (-want +got):\n%s", n, sticky, err, diff)
			}
		}
		steps = n
	}
}

// TestUndo: --undo puts back type, mode and owner, keeps a file the user
// changed (saying so in one line), and touches no path outside its
// directory nor one whose content is not what --fix wrote.
func TestUndo(t *testing.T) {
	etc, in := fixTree(t, true)
	before := snapshot(t, etc)
	plan, err := PlanFix(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := ApplyFix(etc, plan); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, etc)
	if got := after["65-suse.rules"].Kind; got != kindFile {
		t.Errorf("65-suse.rules after --fix is a %s", got)
	}
	if got, want := after["70-tuning.rules"], before["70-tuning.rules"]; got.Mode != want.Mode || got.UID != want.UID || got.GID != want.GID {
		t.Errorf("70-tuning.rules after --fix: mode %v %d:%d, want %v %d:%d", got.Mode, got.UID, got.GID, want.Mode, want.UID, want.GID)
	}
	// A second --fix has nothing left to convert.
	l := List([]string{etc, filepath.Join(filepath.Dir(etc), "lib")})
	if plan, err := PlanFix(FixInput{Read: l.Files, Fix: l.Files, Target: etc}); err != nil || len(plan) != 0 {
		t.Errorf("second PlanFix = %d changes, %v", len(plan), err)
	}

	// The user edits one file; a forged record names a file elsewhere.
	edited := filepath.Join(etc, "70-tuning.rules")
	if err := os.WriteFile(edited, []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "60-persistent-storage.rules")
	if err := os.WriteFile(victim, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(etc)
	if err != nil {
		t.Fatal(err)
	}
	m.Files = append(m.Files, Written{Path: victim, SHA256: hash([]byte("x")), Prior: State{Kind: kindAbsent}})
	if err := writeManifest(OS, etc, m); err != nil {
		t.Fatal(err)
	}
	res, err := Undo(etc)
	if err != nil {
		t.Fatal(err)
	}
	want := UndoResult{
		Removed:  []string{filepath.Join(etc, "60-ioschedulers.rules")},
		Restored: []string{filepath.Join(etc, "65-suse.rules")},
		Gone:     []string{filepath.Join(etc, "10-old.rules")},
		Kept: []string{
			"kept " + edited + ": changed since `iosched audit --fix` wrote it; its original stays recorded in " + filepath.Join(etc, ManifestName) +
				"; `iosched audit --undo --forget " + edited + "` keeps it as it is and drops the record",
			fmt.Sprintf("kept the record of %q: not a rules file of %s, so not touched", victim, etc),
		},
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Undo (-want +got):\n%s", diff)
	}
	if data, err := os.ReadFile(victim); err != nil || string(data) != "x" {
		t.Errorf("the file outside %s: %q, %v", etc, data, err)
	}
	got := snapshot(t, etc)
	for _, n := range []string{"60-ioschedulers.rules", "65-suse.rules"} {
		if diff := cmp.Diff(before[n], got[n]); diff != "" {
			t.Errorf("%s after --undo (-want +got):\n%s", n, diff)
		}
	}
	// Put back by hand, the edited file's record completes.
	if err := os.WriteFile(edited, after["70-tuning.rules"].Data, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err = Undo(etc)
	if err != nil || len(res.Restored) != 1 || !strings.HasSuffix(res.Restored[0], "70-tuning.rules") {
		t.Errorf("second Undo = %+v, %v", res, err)
	}
	if diff := cmp.Diff(before["70-tuning.rules"], snapshot(t, etc)["70-tuning.rules"]); diff != "" {
		t.Errorf("70-tuning.rules after the second --undo (-want +got):\n%s", diff)
	}
}

// TestUndoFailsAtEveryStep: an --undo that fails at any step, once and
// for good, leaves what a second --undo completes.
func TestUndoFailsAtEveryStep(t *testing.T) {
	for n := 1; ; n++ {
		etc, in := fixTree(t, false)
		before := snapshot(t, etc)
		plan, err := PlanFix(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := ApplyFix(etc, plan); err != nil {
			t.Fatal(err)
		}
		f := &faultFS{FS: OS, n: n, sticky: true}
		_, err = undo(f, etc)
		if f.calls < n {
			if err != nil {
				t.Fatalf("undo with no failure: %v", err)
			}
			if n < 5 {
				t.Fatalf("only %d changing steps: the test reaches too little", n-1)
			}
			return
		}
		if !errors.Is(err, errInjected) {
			t.Fatalf("step %d failed, undo = %v", n, err)
		}
		if _, err := undo(OS, etc); err != nil {
			t.Fatalf("step %d failed, then undo again: %v", n, err)
		}
		if diff := cmp.Diff(before, snapshot(t, etc)); diff != "" {
			t.Errorf("undo failed at step %d, then completed (-want +got):\n%s", n, diff)
		}
	}
}

func (f *faultFS) LinkTemp(dir, name string) (string, error) {
	if err := f.step("link temp"); err != nil {
		return "", err
	}
	return f.FS.LinkTemp(dir, name)
}
