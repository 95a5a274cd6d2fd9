package integration

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPartition: a partition has no queue of its own; `set` on it changes
// the whole disk, and a udev event for it is not ours (the disk's own
// event carries the policy), so it reads and writes nothing.
func TestPartition(t *testing.T) {
	b := setup(t, "sfdisk", "partx")
	for _, label := range []string{"gpt", "dos"} {
		t.Run(label, func(t *testing.T) {
			d := newLoop(t, label)
			part := d.Part(t)
			partDevpath := d.Devpath + "/" + part
			sets := []struct {
				name, from, dev, wish, wantOut, wantNow string
				writes                                  bool
			}{
				{"dev path", "none", "/dev/" + part, "kyber", "none -> kyber", "kyber", true},
				{"sys class path", "kyber", "/sys/class/block/" + part, "mq-deadline", "kyber -> mq-deadline", "mq-deadline", true},
				{"kernel name, unchanged", "mq-deadline", part, "deadline", "mq-deadline already active", "mq-deadline", false},
				{"sys devices path", "mq-deadline", "/sys" + partDevpath, "bfq", "mq-deadline -> bfq", "bfq", true},
			}
			for _, tc := range sets {
				for binName, bin := range map[string]string{"cgo": b.Cgo, "static": b.Static} {
					t.Run("set "+tc.name+"/"+binName, func(t *testing.T) {
						force(t, d, tc.from)
						o := run(t, true, nil, bin, "set", tc.dev, tc.wish)
						want := got{0, fmt.Sprintf("%s: %s\n", d.Name, tc.wantOut)}
						if diff := cmp.Diff(want, o.got()); diff != "" {
							t.Errorf("iosched set %s %s (-want +got):\n%s\nstderr: %s", tc.dev, tc.wish, diff, o.Stderr)
						}
						if got := active(t, d); got != tc.wantNow {
							t.Errorf("whole disk %s reads %s, want %s", d.Sched, got, tc.wantNow)
						}
						if tc.writes {
							checkOnlySchedulerWritten(t, o, d)
						} else {
							checkNoWrite(t, o)
						}
					})
				}
			}
			events := []struct {
				name, action, devtype string
			}{
				{"add partition", "add", "partition"},
				{"change partition", "change", "partition"},
				// A DEVTYPE that lies is caught by the partition's sysfs entry.
				{"partition DEVPATH with DEVTYPE=disk", "change", "disk"},
			}
			for _, ev := range events {
				for binName, bin := range map[string]string{"cgo": b.Cgo, "static": b.Static} {
					t.Run("udev "+ev.name+"/"+binName, func(t *testing.T) {
						force(t, d, "none")
						o := run(t, true, udevEnv(ev.action, ev.devtype, partDevpath, "kyber"), bin, "udev")
						if diff := cmp.Diff(got{0, ""}, o.got()); diff != "" {
							t.Errorf("iosched udev for %s (-want +got):\n%s\nstderr: %s", partDevpath, diff, o.Stderr)
						}
						checkNoWrite(t, o)
						if got := active(t, d); got != "none" {
							t.Errorf("whole disk %s reads %s, want none", d.Sched, got)
						}
					})
				}
			}
		})
	}
}
