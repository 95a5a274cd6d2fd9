package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// accesses lists each traced open of a queue file or the disk's lock, as the
// counts below name it: "read scheduler", "write scheduler", "lock".
func accesses(o outcome, d *loopDev) []string {
	queue := filepath.Dir(d.Real) + "/"
	var seq []string
	for _, c := range o.Opens {
		switch {
		case c.lockOpen():
			seq = append(seq, "lock")
		case strings.HasPrefix(c.Resolved(), queue):
			verb := "read "
			if c.ForWriting() {
				verb = "write "
			}
			seq = append(seq, verb+strings.TrimPrefix(c.Resolved(), queue))
		}
	}
	return seq
}

// TestOpensCounted counts, under strace, every open of the queue's
// files: a run that changes nothing reads each file it compares once
// and takes no lock; a change reads once, takes the disk's lock, reads
// again only what it will write, writes it once and reads it back once.
func TestOpensCounted(t *testing.T) {
	b := setup(t)
	d := newLoop(t, "")
	ra := keepAttr(t, d, "read_ahead_kb")
	raOther := map[bool]string{true: "256", false: "128"}[ra == "128"]
	cases := []struct {
		name    string
		initial string
		args    []string
		want    []string
	}{
		{"no-op scheduler", "mq-deadline", []string{"mq-deadline"}, []string{"read scheduler"}},
		{"no-op scheduler and attribute", "mq-deadline", []string{"mq-deadline", "read_ahead_kb=" + ra},
			[]string{"read scheduler", "read read_ahead_kb"}},
		{"scheduler change", "none", []string{"mq-deadline"},
			[]string{"read scheduler", "lock", "read scheduler", "write scheduler", "read scheduler"}},
		{"attribute change, scheduler kept", "mq-deadline", []string{"mq-deadline", "read_ahead_kb=" + raOther},
			[]string{"read scheduler", "read read_ahead_kb", "lock", "read read_ahead_kb", "write read_ahead_kb", "read read_ahead_kb"}},
	}
	for _, tc := range cases {
		for _, bin := range []string{b.Static, b.Cgo} {
			t.Run(tc.name+"/"+filepath.Base(bin), func(t *testing.T) {
				force(t, d, tc.initial)
				if err := os.WriteFile(filepath.Join("/sys/block", d.Name, "queue/read_ahead_kb"), []byte(ra), 0); err != nil {
					t.Fatal(err)
				}
				o := run(t, true, nil, append([]string{bin, "set", d.Name}, tc.args...)...)
				if o.Code != 0 {
					t.Fatalf("set %q: exit %d, stderr %q", tc.args, o.Code, o.Stderr)
				}
				if diff := cmp.Diff(tc.want, accesses(o, d)); diff != "" {
					t.Errorf("set %s %q: opens of queue/ and the lock (-want +got):\n%s\nall opens:\n%s", d.Name, tc.args, diff, o.openLog())
				}
			})
		}
	}
	// The udev entry point, on a change event, reads the same.
	for _, bin := range []string{b.Static, b.Cgo} {
		force(t, d, "mq-deadline")
		o := run(t, true, udevEnv("change", "disk", d.Devpath, "mq-deadline"), bin, "udev")
		if o.Code != 0 {
			t.Fatalf("udev: exit %d, stderr %q", o.Code, o.Stderr)
		}
		if diff := cmp.Diff([]string{"read scheduler"}, accesses(o, d)); diff != "" {
			t.Errorf("%s udev, change event, nothing to do: opens (-want +got):\n%s\nall opens:\n%s", filepath.Base(bin), diff, o.openLog())
		}
	}
	force(t, d, "none")
}
