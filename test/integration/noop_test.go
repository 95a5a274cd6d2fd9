package integration

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkNoWrite fails unless o's trace holds no open for writing at all
// (failed attempts count too).
func checkNoWrite(t *testing.T, o outcome) {
	t.Helper()
	if diff := cmp.Diff([]string{}, o.writeOpens()); diff != "" {
		t.Errorf("opens for writing (-want +got):\n%s\nall opens:\n%s", diff, o.openLog())
	}
}

// TestUnchangedOpensNothingForWriting: a request for the scheduler that is
// already active, in every spelling the kernel would accept, reads
// queue/scheduler and opens nothing for writing, so it cannot freeze the
// queue.
func TestUnchangedOpensNothingForWriting(t *testing.T) {
	b := setup(t)
	d := newLoop(t, "")
	devForms := map[string]string{
		"kernel name": d.Name,
		"dev path":    d.Dev,
		"sys block":   "/sys/block/" + d.Name,
		"sys class":   "/sys/class/block/" + d.Name,
	}
	cases := []struct {
		name, initial, wish, want string
	}{
		{"none on none", "none", "none", "none already active"},
		{"mq-deadline on mq-deadline", "mq-deadline", "mq-deadline", "mq-deadline already active"},
		// elevator_match() also compares elevator_alias (block/elevator.c).
		{"alias deadline on mq-deadline", "mq-deadline", "deadline", "mq-deadline already active"},
		{"kyber on kyber", "kyber", "kyber", "kyber already active"},
		{"bfq on bfq", "bfq", "bfq", "bfq already active"},
		{"first of list active", "kyber", "kyber,bfq", "kyber already active"},
		{"unavailable first, then active", "none", "nosuch,none", "none already active (unavailable: nosuch)"},
	}
	for _, tc := range cases {
		for form, dev := range devForms {
			for binName, bin := range map[string]string{"cgo": b.Cgo, "static": b.Static} {
				t.Run(fmt.Sprintf("%s/%s/%s", tc.name, form, binName), func(t *testing.T) {
					force(t, d, tc.initial)
					o := run(t, true, nil, bin, "set", dev, tc.wish)
					want := got{0, fmt.Sprintf("%s: %s\n", d.Name, tc.want)}
					if diff := cmp.Diff(want, o.got()); diff != "" {
						t.Errorf("iosched set %s %s (-want +got):\n%s\nstderr: %s", dev, tc.wish, diff, o.Stderr)
					}
					checkNoWrite(t, o)
					if !o.readsOf(d.Real) {
						t.Errorf("trace shows no read of %s: is strace tracing the helper?\n%s", d.Real, o.openLog())
					}
					if got := active(t, d); got != tc.initial {
						t.Errorf("after the run %s reads %s, want %s", d.Sched, got, tc.initial)
					}
				})
			}
		}
	}
}

// TestUdevUnchangedOpensNothingForWriting runs the udev entry point the
// way a RUN+= rule does (properties in the environment), as `iosched udev`
// and as a program named iosched-udev, for both builds.
func TestUdevUnchangedOpensNothingForWriting(t *testing.T) {
	b := setup(t)
	d := newLoop(t, "")
	type invocation struct {
		name string
		argv []string
	}
	var invs []invocation
	for binName, bin := range map[string]string{"cgo": b.Cgo, "static": b.Static} {
		invs = append(invs,
			invocation{binName + "/iosched udev", []string{bin, "udev"}},
			invocation{binName + "/iosched-udev symlink", []string{udevLink(t, bin)}})
	}
	cases := []struct {
		name, initial, action, policy string
		want                          string // stdout; "" for events that are not ours
		reads                         bool   // the helper must read queue/scheduler
	}{
		{"change none on none", "none", "change", "none", "none already active", true},
		{"add mq-deadline on mq-deadline", "mq-deadline", "add", "mq-deadline", "mq-deadline already active", true},
		{"change alias deadline", "mq-deadline", "change", "deadline", "mq-deadline already active", true},
		{"change list with unavailable first", "kyber", "change", "nosuch,kyber,bfq", "kyber already active (unavailable: nosuch)", true},
		{"remove event", "none", "remove", "kyber", "", false},
		{"empty policy", "none", "change", "", "", false},
		{"bind event", "none", "bind", "kyber", "", false},
	}
	for _, tc := range cases {
		for _, inv := range invs {
			t.Run(tc.name+"/"+inv.name, func(t *testing.T) {
				force(t, d, tc.initial)
				o := run(t, true, udevEnv(tc.action, "disk", d.Devpath, tc.policy), inv.argv...)
				want := got{0, ""}
				if tc.want != "" {
					want.Stdout = fmt.Sprintf("%s: %s\n", d.Name, tc.want)
				}
				if diff := cmp.Diff(want, o.got()); diff != "" {
					t.Errorf("%v ACTION=%s IOSCHED_SCHEDULER=%q (-want +got):\n%s\nstderr: %s", inv.argv, tc.action, tc.policy, diff, o.Stderr)
				}
				checkNoWrite(t, o)
				if tc.reads && !o.readsOf(d.Real) {
					t.Errorf("trace shows no read of %s:\n%s", d.Real, o.openLog())
				}
				if got := active(t, d); got != tc.initial {
					t.Errorf("after the run %s reads %s, want %s", d.Sched, got, tc.initial)
				}
			})
		}
	}
}

// TestStatusOpensNothingForWriting: `iosched status` only reads, and
// reports each disk's active and offered schedulers as the kernel does.
// It runs with a /sys/block that lists only the test's two loop devices.
func TestStatusOpensNothingForWriting(t *testing.T) {
	b := setup(t, "unshare")
	d := newLoop(t, "")
	d2 := newLoop(t, "")
	force(t, d, "kyber")
	offered := offeredBy(t, d)
	for binName, bin := range map[string]string{"cgo": b.Cgo, "static": b.Static} {
		t.Run(binName, func(t *testing.T) {
			o, err := runE(t.TempDir(), blockView(t, d.Name, d2.Name), true, nil, bin, "status", "--json")
			if err != nil {
				t.Fatal(err)
			}
			if o.Code != 0 {
				t.Fatalf("iosched status --json: exit %d, stderr %s", o.Code, o.Stderr)
			}
			checkNoWrite(t, o)
			var rows []struct {
				Disk    string   `json:"disk"`
				Active  string   `json:"active"`
				Offered []string `json:"offered"`
			}
			if err := json.Unmarshal([]byte(o.Stdout), &rows); err != nil {
				t.Fatalf("status --json output: %v\n%s", err, o.Stdout)
			}
			type row struct {
				Active  string
				Offered []string
			}
			gotRows := map[string]row{}
			for _, r := range rows {
				gotRows[r.Disk] = row{r.Active, r.Offered}
			}
			want := map[string]row{d.Name: {"kyber", offered}, d2.Name: {active(t, d2), offered}}
			if diff := cmp.Diff(want, gotRows); diff != "" {
				t.Errorf("status rows (-want +got):\n%s", diff)
			}
		})
	}
}
