package rulesaudit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// short is a Finding without the replacement text, for compact tables.
type short struct {
	Line   int
	Attr   string
	ViaRUN bool
}

func TestAudit(t *testing.T) {
	tests := []struct {
		file string
		want []short
	}{
		{"fedora-style.rules", nil},
		{"rhel-style.rules", nil},
		{"suse-style.rules", []short{{7, "scheduler", false}, {8, "scheduler", false}, {9, "scheduler", false}, {10, "scheduler", false}}},
		{"cachyos-style.rules", []short{{2, "scheduler", false}, {3, "scheduler", false}, {4, "scheduler", false}, {5, "wbt_lat_usec", false}}},
		{"hand-written.rules", []short{{3, "add_random", false}, {3, "max_sectors_kb", false}, {3, "rotational", false}, {3, "scheduler", false}, {8, "scheduler", true}}},
		{"guarded.rules", nil},
	}
	for _, tt := range tests {
		found, err := File(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		var got []short
		for _, f := range found {
			got = append(got, short{f.Line, f.Attr, f.ViaRUN})
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("File(%s) (-want +got):\n%s", tt.file, diff)
		}
	}
}

func TestReplacement(t *testing.T) {
	found, err := File("testdata/cachyos-style.rules")
	if err != nil {
		t.Fatal(err)
	}
	want := `ACTION=="add|change", KERNEL=="sd[a-z]*", ATTR{queue/rotational}=="1", ENV{IOSCHED_SCHEDULER}="bfq"`
	if diff := cmp.Diff(want, found[0].Replace); diff != "" {
		t.Errorf("replacement (-want +got):\n%s", diff)
	}
	want = `ACTION=="add|change", KERNEL=="sd[a-z]*|nvme[0-9]*", ENV{IOSCHED_ATTR_wbt_lat_usec}="2000", ATTR{queue/nr_requests}="256"`
	if diff := cmp.Diff(want, found[3].Replace); diff != "" {
		t.Errorf("replacement (-want +got):\n%s", diff)
	}
}

func TestRulesFiles(t *testing.T) {
	etc, lib := t.TempDir(), t.TempDir()
	for _, f := range []string{filepath.Join(etc, "60-a.rules"), filepath.Join(lib, "60-a.rules"), filepath.Join(lib, "10-b.rules"), filepath.Join(lib, "README")} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := RulesFiles([]string{etc, filepath.Join(etc, "missing"), lib})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(lib, "10-b.rules"), filepath.Join(etc, "60-a.rules")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RulesFiles (-want +got):\n%s", diff)
	}
}
