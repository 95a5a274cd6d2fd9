package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUnprivileged runs the helper as nobody (uid 65534, no groups, no
// capabilities) against the test's loop device: a no-op still works,
// since queue/scheduler is world-readable; a change fails with exit 1 and
// one line naming the file and "permission denied", and nothing is written.
func TestUnprivileged(t *testing.T) {
	b := setup(t, "setpriv")
	d := newLoop(t, "")
	nobody := []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--"}
	for binName, bin := range map[string]string{"cgo": b.Cgo, "static": b.Static} {
		t.Run("no-op/"+binName, func(t *testing.T) {
			force(t, d, "none")
			o := run(t, true, nil, append(nobody, bin, "set", d.Dev, "none")...)
			if diff := cmp.Diff(got{0, d.Name + ": none already active\n"}, o.got()); diff != "" {
				t.Errorf("as nobody: iosched set %s none (-want +got):\n%s\nstderr: %s", d.Dev, diff, o.Stderr)
			}
			checkNoWrite(t, o)
		})
		cases := []struct {
			name string
			env  []string
			argv []string
		}{
			{"set", nil, []string{bin, "set", d.Dev, "kyber"}},
			{"udev", udevEnv("change", "disk", d.Devpath, "kyber"), []string{bin, "udev"}},
		}
		for _, tc := range cases {
			t.Run(tc.name+"/"+binName, func(t *testing.T) {
				force(t, d, "none")
				o := run(t, true, tc.env, append(nobody, tc.argv...)...)
				msg := strings.TrimSuffix(o.Stderr, "\n")
				type res struct {
					Code                    int
					Stdout                  string
					OneLine, Denied, NameIt bool
				}
				want := res{1, "", true, true, true}
				gotRes := res{o.Code, o.Stdout, msg != "" && !strings.Contains(msg, "\n"),
					strings.Contains(msg, "permission denied"), strings.Contains(msg, d.Sched)}
				if diff := cmp.Diff(want, gotRes); diff != "" {
					t.Errorf("as nobody: %q (-want +got):\n%s\nstderr: %q", tc.argv, diff, o.Stderr)
				}
				// The one attempt to open for writing must be the scheduler
				// file, refused by the kernel.
				var attempts []string
				for _, c := range o.Opens {
					if c.ForWriting() {
						attempts = append(attempts, fmt.Sprintf("%s %s", c.Resolved(), strings.Fields(c.Result + " ?")[1]))
					}
				}
				if diff := cmp.Diff([]string{d.Real + " EACCES"}, attempts); diff != "" {
					t.Errorf("write attempts (-want +got):\n%s\nall opens:\n%s", diff, o.openLog())
				}
				if got := active(t, d); got != "none" {
					t.Errorf("%s reads %s, want none", d.Sched, got)
				}
			})
		}
	}
}
