package status

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/iosched/iosched/helper/apply"
	"github.com/iosched/iosched/helper/disklock"
	"github.com/iosched/iosched/helper/internal/fixture"
	"github.com/iosched/iosched/helper/policy"
	"github.com/iosched/iosched/helper/udevdb"
)

// TestRows: what each disk runs against its recorded policy, what apply
// would change, and the tuned profile configured to write it; a build
// without the udev database knows no policy.
func TestRows(t *testing.T) {
	sys := fixture.New(t, fixture.Standard()...)
	root := t.TempDir()
	for p, c := range map[string]string{
		"etc/tuned/active_profile":           "mine\n",
		"etc/tuned/profiles/mine/tuned.conf": "[main]\ninclude=base\n[disk]\nelevator=kyber\n",
		"etc/tuned/profiles/base/tuned.conf": "[disk]\nreadahead=4096\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := map[string]map[string]string{
		"sda":   {"IOSCHED_SCHEDULER": "bfq", "IOSCHED_ATTR_read_ahead_kb": "256"},
		"loop0": {"IOSCHED_SCHEDULER": "none"},
	}
	src := Source{
		Sys:  sys,
		Root: root,
		Udev: func(disk string) (map[string]string, error) { return db[disk], nil },
		Disk: func(q apply.Queue) policy.Disk {
			return policy.Disk{Queue: q, Sys: sys, Locks: disklock.Dir{Path: t.TempDir(), Owner: os.Geteuid()}}
		},
	}
	rows, err := src.Rows()
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Disk, Wanted       string
		Holds              string
		Drift, Changes, By []string
	}
	var got []row
	for _, r := range rows {
		w := "-"
		if r.Wanted != nil {
			w = *r.Wanted
		}
		h := "-"
		if r.Holds != nil {
			h = fmt.Sprint(*r.Holds)
		}
		got = append(got, row{r.Disk, w, h, r.Drift, r.Changes, r.Writers})
	}
	want := []row{
		{Disk: "loop0", Wanted: "none", Holds: "true"},
		{Disk: "nvme0n1", Wanted: "-", Holds: "-"},
		{Disk: "sda", Wanted: "bfq", Holds: "false",
			Drift:   []string{"mq-deadline -> bfq", "read_ahead_kb 128 -> 256"},
			Changes: []string{"scheduler", "read_ahead_kb"},
			// The included profile's readahead= is not named.
			By: []string{`tuned (/etc/tuned/profiles/mine/tuned.conf:4) writes scheduler="kyber"`}},
		{Disk: "zram0", Wanted: "-", Holds: "-"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Rows (-want +got):\n%s", diff)
	}

	src.Udev = func(string) (map[string]string, error) { return nil, udevdb.ErrUnavailable }
	rows, err = src.Rows()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if !r.NoUdevDB || r.Wanted != nil || r.Holds != nil {
			t.Errorf("without the udev database: %s NoUdevDB %v, wanted %v, holds %v; want true, nil, nil", r.Disk, r.NoUdevDB, r.Wanted, r.Holds)
		}
	}
}
