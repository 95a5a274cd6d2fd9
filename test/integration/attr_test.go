package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// keepAttr reads queue/ATTR of d now and registers a cleanup (run before
// the detach) that writes the value back if a test changed it.
func keepAttr(t *testing.T, d *loopDev, attr string) string {
	t.Helper()
	path := filepath.Join("/sys/block", d.Name, "queue", attr)
	orig, err := readFile(path)
	if err != nil {
		t.Fatal(err)
	}
	orig = strings.TrimSpace(orig)
	t.Cleanup(func() {
		if cur, err := readFile(path); err == nil && strings.TrimSpace(cur) != orig {
			if err := os.WriteFile(path, []byte(orig), 0); err != nil {
				t.Errorf("restore %s to %s: %v", path, orig, err)
			}
		}
	})
	return orig
}

func queueAttr(t *testing.T, d *loopDev, attr string) string {
	t.Helper()
	s, err := readFile(filepath.Join("/sys/block", d.Name, "queue", attr))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(s)
}

// realAttr is the resolved path of queue/ATTR, as writeOpens reports it.
func realAttr(d *loopDev, attr string) string {
	return filepath.Join(filepath.Dir(d.Real), attr)
}

// TestQueueAttrs: ATTR=VALUE settings are written only when the kernel
// would change the value, and each write opens only that attribute.
// read_ahead_kb has its own store; rotational and nomerges go through
// queue_attr_store(), rotational with a frozen limits commit (7.3).
func TestQueueAttrs(t *testing.T) {
	b := setup(t)
	d := newLoop(t, "")
	force(t, d, "none")
	ra := keepAttr(t, d, "read_ahead_kb")
	rot := keepAttr(t, d, "rotational")
	nm := keepAttr(t, d, "nomerges")
	raNum, err := strconv.Atoi(ra)
	if err != nil {
		t.Fatalf("read_ahead_kb %q: %v", ra, err)
	}
	otherRA := strconv.Itoa(raNum/8*4 + 4) // another whole number of 4 KiB pages
	otherRot := map[string]string{"0": "1", "1": "0"}[rot]
	udevAttrs := func(kv ...string) []string {
		env := udevEnv("change", "disk", d.Devpath, "")
		return append(env, kv...)
	}
	cases := []struct {
		name   string
		env    []string
		argv   []string
		out    []string // stdout lines after "loopN: "
		writes []string // attributes opened for writing, in order
		// alt is the other answer a kernel may give, where the writes
		// before an attribute decide whether it changes: its lines and
		// its writes.
		alt, altWrites []string
		after          map[string]string
	}{
		{"unchanged attrs", nil, []string{b.Cgo, "set", d.Name, "read_ahead_kb=" + ra, "nomerges=" + nm, "rotational=" + rot},
			[]string{"rotational " + rot + " already set", "read_ahead_kb " + ra + " already set", "nomerges " + nm + " already set"},
			nil, nil, nil, map[string]string{"read_ahead_kb": ra, "rotational": rot}},
		{"unchanged scheduler and attr", nil, []string{b.Static, "set", d.Dev, "none", "read_ahead_kb=" + ra},
			[]string{"none already active", "read_ahead_kb " + ra + " already set"}, nil, nil, nil, nil},
		{"udev unchanged attr", udevAttrs("IOSCHED_ATTR_read_ahead_kb=" + ra), []string{b.Cgo, "udev"},
			[]string{"read_ahead_kb " + ra + " already set"}, nil, nil, nil, nil},
		{"change read_ahead_kb", nil, []string{b.Cgo, "set", d.Name, "read_ahead_kb=" + otherRA},
			[]string{"read_ahead_kb " + ra + " -> " + otherRA}, []string{"read_ahead_kb"}, nil, nil, map[string]string{"read_ahead_kb": otherRA}},
		// A limits commit (rotational) recomputes read-ahead on 6.18
		// (blk_apply_bdi_limits): the limit goes first, so read_ahead_kb
		// is written after it when the commit moved it, and holds.
		{"change rotational, keep read_ahead_kb", nil, []string{b.Static, "set", d.Name, "read_ahead_kb=" + otherRA, "rotational=" + otherRot},
			[]string{"rotational " + rot + " -> " + otherRot, "read_ahead_kb " + otherRA + " already set"}, []string{"rotational"},
			[]string{"rotational " + rot + " -> " + otherRot, "read_ahead_kb " + ra + " -> " + otherRA}, []string{"rotational", "read_ahead_kb"},
			map[string]string{"rotational": otherRot, "read_ahead_kb": otherRA}},
		{"udev change back", udevAttrs("IOSCHED_ATTR_read_ahead_kb="+ra, "IOSCHED_ATTR_rotational="+rot), []string{b.Cgo, "udev"},
			[]string{"rotational " + otherRot + " -> " + rot, "read_ahead_kb " + otherRA + " -> " + ra}, []string{"rotational", "read_ahead_kb"},
			[]string{"rotational " + otherRot + " -> " + rot, "read_ahead_kb " + ra + " already set"}, []string{"rotational"},
			map[string]string{"read_ahead_kb": ra, "rotational": rot}},
		// read_expire is kept in jiffies (STORE_JIFFIES in mq-deadline.c):
		// 300 ms is a whole number of jiffies at HZ 100, 250, 300 and 1000.
		{"scheduler then its tunable", nil, []string{b.Cgo, "set", d.Name, "mq-deadline", "iosched/read_expire=300"},
			[]string{"none -> mq-deadline", "iosched/read_expire 500 -> 300"}, []string{"scheduler", "iosched/read_expire"}, nil, nil,
			map[string]string{"scheduler": "[mq-deadline]", "iosched/read_expire": "300"}},
		{"tunable unchanged", nil, []string{b.Static, "set", d.Name, "deadline", "iosched/read_expire=300"},
			[]string{"mq-deadline already active", "iosched/read_expire 300 already set"}, nil, nil, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := run(t, true, tc.env, tc.argv...)
			var want got
			out, writes := tc.out, tc.writes
			if tc.alt != nil && !strings.Contains(o.Stdout, tc.out[len(tc.out)-1]) {
				out, writes = tc.alt, tc.altWrites
			}
			for _, l := range out {
				want.Stdout += d.Name + ": " + l + "\n"
			}
			if diff := cmp.Diff(want, o.got()); diff != "" {
				t.Errorf("%q (-want +got):\n%s\nstderr: %s", tc.argv, diff, o.Stderr)
			}
			wantW := []string{}
			for _, a := range writes {
				wantW = append(wantW, realAttr(d, a))
			}
			if diff := cmp.Diff(wantW, o.writeOpens()); diff != "" {
				t.Errorf("opens for writing (-want +got):\n%s\nall opens:\n%s", diff, o.openLog())
			}
			for attr, v := range tc.after {
				if got := queueAttr(t, d, attr); !strings.Contains(got, v) {
					t.Errorf("queue/%s reads %q afterwards, want %q", attr, got, v)
				}
			}
		})
	}
	force(t, d, "none")
	if got := fmt.Sprint(queueAttr(t, d, "read_ahead_kb"), queueAttr(t, d, "rotational")); got != fmt.Sprint(ra, rot) {
		t.Errorf("read_ahead_kb rotational = %s at the end, want %s %s", got, ra, rot)
	}
}
