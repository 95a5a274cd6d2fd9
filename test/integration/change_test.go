package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkOnlySchedulerWritten fails unless every open for writing in o's
// trace is the disk's queue/scheduler, and there is at least one.
func checkOnlySchedulerWritten(t *testing.T, o outcome, d *loopDev) {
	t.Helper()
	got := o.writeOpens()
	if len(got) == 0 {
		t.Errorf("no open for writing in the trace, want %s:\n%s", d.Real, o.openLog())
		return
	}
	want := make([]string, len(got))
	for i := range want {
		want[i] = d.Real
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("opens for writing (-want +got):\n%s\nall opens:\n%s", diff, o.openLog())
	}
}

// TestChange: a request for another scheduler is written, the kernel
// reports it active afterwards, and queue/scheduler of the disk is the
// only file the helper opens for writing.
func TestChange(t *testing.T) {
	b := setup(t)
	d := newLoop(t, "")
	link := udevLink(t, b.Static)
	set := func(bin string, args ...string) []string { return append([]string{bin, "set"}, args...) }
	cases := []struct {
		name     string
		from     string
		env      []string
		argv     []string
		wantOut  string // after "loopN: "
		wantNow  string // active scheduler afterwards
		wantsRaw bool   // expect a write open (false: dry run)
	}{
		{"none to mq-deadline", "none", nil, set(b.Cgo, d.Dev, "mq-deadline"), "none -> mq-deadline", "mq-deadline", true},
		{"mq-deadline to kyber", "mq-deadline", nil, set(b.Cgo, d.Name, "kyber"), "mq-deadline -> kyber", "kyber", true},
		{"kyber to bfq", "kyber", nil, set(b.Cgo, "/sys/block/"+d.Name, "bfq"), "kyber -> bfq", "bfq", true},
		{"unavailable first in list", "bfq", nil, set(b.Cgo, d.Dev, "nosuch,kyber"), "bfq -> kyber (unavailable: nosuch)", "kyber", true},
		{"alias deadline", "kyber", nil, set(b.Cgo, "/sys/class/block/"+d.Name, "deadline"), "kyber -> mq-deadline", "mq-deadline", true},
		{"back to none", "mq-deadline", nil, set(b.Cgo, d.Dev, "none"), "mq-deadline -> none", "none", true},
		{"static build, list", "none", nil, set(b.Static, d.Dev, "bfq,kyber"), "none -> bfq", "bfq", true},
		{"static build, whitespace kernel strips", "none", nil, set(b.Static, d.Dev, " kyber "), "none -> kyber", "kyber", true},
		{"dry run writes nothing", "bfq", nil, set(b.Cgo, "--dry-run", d.Dev, "kyber"), "bfq -> kyber (dry run)", "bfq", false},
		{"udev add, iosched-udev symlink", "bfq", udevEnv("add", "disk", d.Devpath, "mq-deadline"), []string{link}, "bfq -> mq-deadline", "mq-deadline", true},
		{"udev change, cgo build", "mq-deadline", udevEnv("change", "disk", d.Devpath, "nosuch,none"), []string{b.Cgo, "udev"}, "mq-deadline -> none (unavailable: nosuch)", "none", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			force(t, d, tc.from)
			o := run(t, true, tc.env, tc.argv...)
			want := got{0, fmt.Sprintf("%s: %s\n", d.Name, tc.wantOut)}
			if diff := cmp.Diff(want, o.got()); diff != "" {
				t.Errorf("%q (-want +got):\n%s\nstderr: %s", tc.argv, diff, o.Stderr)
			}
			if got := active(t, d); got != tc.wantNow {
				t.Errorf("%s reads %s afterwards, want %s", d.Sched, got, tc.wantNow)
			}
			if tc.wantsRaw {
				checkOnlySchedulerWritten(t, o, d)
			} else {
				checkNoWrite(t, o)
			}
		})
	}
}

// TestTraceSeesShellWrite is the control for every "nothing opened for
// writing" check: the same trace of an unconditional shell write (what a
// udev ATTR{} assignment does) must show the scheduler opened for writing.
func TestTraceSeesShellWrite(t *testing.T) {
	setup(t)
	d := newLoop(t, "")
	force(t, d, "none")
	o := run(t, true, nil, "sh", "-c", "echo none > "+d.Sched)
	if o.Code != 0 {
		t.Fatalf("sh: exit %d: %s", o.Code, o.Stderr)
	}
	checkOnlySchedulerWritten(t, o, d)
	if !strings.Contains(o.Trace, "O_WRONLY") {
		t.Errorf("raw trace holds no O_WRONLY:\n%s", o.Trace)
	}
}
