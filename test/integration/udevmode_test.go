package integration

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUdevModeKeepsGoing: the udev entry point, given good and bad
// properties for a real loop device, applies every good one (the
// scheduler first, then the attributes, then the tunables of the new
// scheduler), reports each bad one on a stderr line of its own naming the
// disk and the property, prints no usage text, and exits 1. Only the
// files of the good settings are opened for writing.
func TestUdevModeKeepsGoing(t *testing.T) {
	b := setup(t)
	d := newLoop(t, "")
	force(t, d, "none")
	ra := keepAttr(t, d, "read_ahead_kb")
	raNum, err := strconv.Atoi(ra)
	if err != nil {
		t.Fatal(err)
	}
	newRA := strconv.Itoa(raNum + 64)
	env := append(udevEnv("change", "disk", d.Devpath, "mq-deadline"),
		"IOSCHED_ATTR_read_ahead_kb="+newRA,
		"IOSCHED_ATTR_dev=1",
		"IOSCHED_ATTR_nr_requests=lots",
		"IOSCHED_TUNE_read_lat_nsec=1000", // kyber's, not mq-deadline's
		"IOSCHED_TUNE_fifo_batch=8",
	)
	for name, argv := range map[string][]string{"iosched-udev": {udevLink(t, b.Static)}, "cgo": {b.Cgo, "udev"}} {
		t.Run(name, func(t *testing.T) {
			force(t, d, "none")
			o := run(t, true, env, argv...)
			want := got{1, fmt.Sprintf("%[1]s: none -> mq-deadline\n%[1]s: read_ahead_kb %[2]s -> %[3]s\n%[1]s: iosched/fifo_batch 16 -> 8\n",
				d.Name, ra, newRA)}
			if strings.Contains(o.Stdout, "read_ahead_kb "+newRA+" already set") {
				// The static run went first and left it set.
				want.Stdout = strings.Replace(want.Stdout, "read_ahead_kb "+ra+" -> "+newRA, "read_ahead_kb "+newRA+" already set", 1)
			}
			if diff := cmp.Diff(want, o.got()); diff != "" {
				t.Errorf("iosched udev (-want +got):\n%s\nstderr:\n%s", diff, o.Stderr)
			}
			lines := strings.Split(strings.TrimSuffix(o.Stderr, "\n"), "\n")
			for i, bad := range [][2]string{{"IOSCHED_ATTR_dev", `"1"`}, {"IOSCHED_ATTR_nr_requests", `"lots"`}, {"IOSCHED_TUNE_read_lat_nsec", `"1000"`}} {
				prefix := "iosched: " + d.Name + ": " + bad[0]
				if i >= len(lines) || !strings.HasPrefix(lines[i], prefix) || !strings.Contains(lines[i], bad[1]) {
					t.Errorf("stderr line %d should start %q and hold the value %s:\n%s", i+1, prefix, bad[1], o.Stderr)
				}
			}
			if len(lines) != 3 || strings.Contains(o.Stderr, "usage") {
				t.Errorf("stderr: want exactly the 3 property lines, no usage text:\n%s", o.Stderr)
			}
			if a := active(t, d); a != "mq-deadline" {
				t.Errorf("active scheduler %s, want mq-deadline", a)
			}
			if v := queueAttr(t, d, "read_ahead_kb"); v != newRA {
				t.Errorf("read_ahead_kb %s, want %s", v, newRA)
			}
			if v := queueAttr(t, d, "iosched/fifo_batch"); v != "8" {
				t.Errorf("iosched/fifo_batch %s, want 8", v)
			}
			allowed := []string{d.Real, realAttr(d, "read_ahead_kb"), realAttr(d, "iosched/fifo_batch")}
			for _, p := range o.writeOpens() {
				if !slices.Contains(allowed, p) {
					t.Errorf("opened %s for writing; only %v may be:\n%s", p, allowed, o.openLog())
				}
			}
		})
	}
}

// TestTunableCheckedBeforeSwitch: `set` refuses a tunable that the
// scheduler it would switch to does not have, before any write: the disk
// keeps its scheduler and nothing is opened for writing.
func TestTunableCheckedBeforeSwitch(t *testing.T) {
	b := setup(t)
	d := newLoop(t, "")
	force(t, d, "none")
	for _, args := range [][]string{
		{"set", d.Name, "kyber", "iosched/fifo_batch=8"},
		{"set", d.Dev, "none", "iosched/read_expire=250"},
		{"set", d.Name, "mq-deadline,kyber", "iosched/read_lat_nsec=1000", "read_ahead_kb=64"},
	} {
		o := run(t, true, nil, append([]string{b.Static}, args...)...)
		first, _, _ := strings.Cut(o.Stderr, "\n")
		if o.Code != 2 || o.Stdout != "" || !strings.Contains(first, d.Name+": iosched/") || !strings.Contains(first, "tunable") {
			t.Errorf("iosched %q: exit %d, stdout %q, stderr %q; want exit 2 and a message naming %s and the tunable",
				args, o.Code, o.Stdout, o.Stderr, d.Name)
		}
		checkNoWrite(t, o)
		if a := active(t, d); a != "none" {
			t.Fatalf("iosched %q switched %s to %s", args, d.Name, a)
		}
	}
}
