package rulesaudit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAuditFixable: the files named are audited whatever their place;
// only those udevd reads, by their absolute path, may be fixed, and each
// other one says why not.
func TestAuditFixable(t *testing.T) {
	etc, lib, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	tuning, err := os.ReadFile("testdata/tuning.rules")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		filepath.Join(etc, "50-a.rules"),
		filepath.Join(lib, "50-a.rules"), // masked by etc's
		filepath.Join(lib, "60-b.rules"),
		filepath.Join(elsewhere, "60-b.rules"), // udevd reads lib's
		filepath.Join(elsewhere, "70-c.rules"),
	} {
		if err := os.WriteFile(p, tuning, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dirs := []string{etc, lib}
	system := Audit(nil, dirs)
	if diff := cmp.Diff([]string{etc, lib}, system.Read); diff != "" {
		t.Errorf("Audit(nil) read (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{filepath.Join(etc, "50-a.rules"), filepath.Join(lib, "60-b.rules")}, system.Files); diff != "" {
		t.Errorf("Audit(nil) files (-want +got):\n%s", diff)
	}
	if len(system.Found) == 0 {
		t.Error("Audit(nil) found nothing in tuning.rules")
	}

	named := []string{filepath.Join(lib, "60-b.rules"), filepath.Join(lib, "50-a.rules"), elsewhere, filepath.Join(etc, "nosuch.rules")}
	a := Audit(named, dirs)
	if len(a.Skipped) != 1 {
		t.Errorf("Audit(%q) skipped %v, want the missing file alone", named, a.Skipped)
	}
	fixable, not := a.Fixable()
	if diff := cmp.Diff([]string{filepath.Join(lib, "60-b.rules")}, fixable); diff != "" {
		t.Errorf("Fixable (-want +got):\n%s", diff)
	}
	var whys []string
	for _, err := range not {
		whys = append(whys, err.Error())
	}
	want := []string{
		filepath.Join(lib, "50-a.rules") + ": audited, not fixed: udevd reads " + filepath.Join(etc, "50-a.rules") + " in its place",
		filepath.Join(elsewhere, "60-b.rules") + ": audited, not fixed: udevd reads " + filepath.Join(lib, "60-b.rules") + " in its place",
		filepath.Join(elsewhere, "70-c.rules") + ": audited, not fixed: it is not in udev's rules directories (" + etc + ", " + lib + ")",
	}
	if diff := cmp.Diff(want, whys); diff != "" {
		t.Errorf("Fixable's refusals (-want +got):\n%s", diff)
	}
}

func TestRefusedFiles(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("disk full"), 0},
		{Refusal{File: "a.rules", Line: 3}, 1},
		{errors.Join(Refusal{File: "a.rules", Line: 3}, Refusal{File: "a.rules", Line: 9}, Refusal{File: "b.rules"}), 2},
		{errors.Join(errors.Join(Refusal{File: "a.rules"}), fmt.Errorf("plan: %w", Refusal{File: "c.rules"})), 2},
	}
	for _, tt := range tests {
		if got := RefusedFiles(tt.err); got != tt.want {
			t.Errorf("RefusedFiles(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}
