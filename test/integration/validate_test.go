package integration

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRefusedOpensNothing: every command that exits 2, including those
// whose refusal depends on the queue's state or on a scheduler switch
// the same command asks for, opens nothing for writing (strace), and
// the queue reads as before.
func TestRefusedOpensNothing(t *testing.T) {
	b := setup(t)
	d := newLoop(t, "")
	force(t, d, "none")
	depth, err := readFile(filepath.Join("/sys/block", d.Name, "mq/0/nr_tags"))
	if err != nil {
		t.Fatal(err)
	}
	above := strings.TrimSpace(depth) + "1" // ten times the depth and more
	hw := queueAttr(t, d, "max_hw_sectors_kb")
	rot := map[string]string{"0": "1", "1": "0"}[queueAttr(t, d, "rotational")]
	cases := []struct {
		setup  string
		args   []string
		reason string
		state  bool // the refusal depends on the queue: the helper must read it
	}{
		{"none", []string{"rotational=" + rot, "nr_requests=" + above}, "above the queue depth", true},
		{"none", []string{"mq-deadline", "max_sectors_kb=" + hw + "0"}, "at most max_hw_sectors_kb", true},
		{"none", []string{"bfq", "nr_requests=4096"}, "MAX_SCHED_RQ", true},
		{"mq-deadline", []string{"iosched/read_expire=2147483647"}, "reads back negative", false},
		{"none", []string{"mq-deadline", "iosched/write_expire=2147483647"}, "reads back negative", false},
		{"mq-deadline", []string{"iosched/fifo_batch=2147483648"}, "kstrtoint", false},
		{"none", []string{"read_ahead_kb=128", "read_ahead_kb=256"}, "given twice", false},
		{"bfq", []string{"iosched/slice_idle=0", "iosched/slice_idle_us=0"}, "two units", false},
		{"none", []string{"bfq", "iosched/slice_idle_us=2000", "iosched/slice_idle=2"}, "two units", false},
		{"mq-deadline", []string{"iosched/slice_idle=0"}, "not a tunable of mq-deadline", true},
		{"mq-deadline", []string{"none", "iosched/read_expire=100"}, "none has no tunables", true},
		{"none", []string{"read_ahead_kb=256", "nomerges=7"}, "would keep 1", false},
		{"none", []string{"kyber,keep,bfq"}, "ends a list", false},
	}
	offered := offeredBy(t, d)
	ran := 0
	for _, c := range cases {
		need := append([]string{c.setup}, c.args[0])
		if i := slices.IndexFunc(need, func(s string) bool {
			return !strings.Contains(s, "=") && !strings.Contains(s, ",") && !slices.Contains(offered, s)
		}); i >= 0 {
			t.Logf("%s not offered here: skipping %q", need[i], c.args)
			continue
		}
		force(t, d, c.setup)
		before := snapshotQueue(t, d)
		argv := append([]string{b.Static, "set", d.Name}, c.args...)
		o := run(t, true, nil, argv...)
		if o.Code != 2 || !strings.Contains(o.Stderr, c.reason) {
			t.Errorf("set %q: exit %d, stderr %q; want exit 2 and %q", c.args, o.Code, o.Stderr, c.reason)
		}
		if c.state && !o.readsOf(d.Real) {
			t.Errorf("set %q: the trace shows no read of %s: it saw nothing of the check", c.args, d.Real)
		}
		checkNoWrite(t, o)
		if diff := cmp.Diff(before, snapshotQueue(t, d)); diff != "" {
			t.Errorf("set %q: the queue changed (-before +after):\n%s", c.args, diff)
		}
		ran++
	}
	if ran == 0 {
		t.Fatal("no case ran")
	}
	t.Logf("%d of %d cases ran", ran, len(cases))
	force(t, d, "none")
}

// TestLinkedConverge: settings the kernel links (a limits commit raises
// read-ahead, strict_guarantees raises slice_idle, nr_requests resets
// async_depth) given together converge in one run: the second opens
// nothing for writing.
func TestLinkedConverge(t *testing.T) {
	b := setup(t)
	d := newLoop(t, "")
	force(t, d, "none")
	keepAttr(t, d, "read_ahead_kb")
	rot := keepAttr(t, d, "rotational")
	flip := map[string]string{"0": "1", "1": "0"}[rot]
	cases := []struct {
		sched string
		args  []string
	}{
		{"none", []string{"read_ahead_kb=64", "rotational=" + flip}},
		{"none", []string{"read_ahead_kb=32", "rotational=" + rot}},
		{"bfq", []string{"bfq", "iosched/slice_idle=0", "iosched/strict_guarantees=1"}},
		{"mq-deadline", []string{"mq-deadline", "iosched/async_depth=32", "nr_requests=64"}},
	}
	offered := offeredBy(t, d)
	ran := 0
	for _, c := range cases {
		if !slices.Contains(offered, c.sched) {
			t.Logf("%s not offered: skipping %q", c.sched, c.args)
			continue
		}
		force(t, d, "none")
		if c.sched == "mq-deadline" {
			force(t, d, c.sched)
			if _, err := os.Stat(filepath.Join("/sys/block", d.Name, "queue/iosched/async_depth")); err != nil {
				t.Logf("no iosched/async_depth on this kernel: skipping %q", c.args)
				continue
			}
		}
		argv := append([]string{b.Static, "set", d.Name}, c.args...)
		first := run(t, true, nil, argv...)
		if first.Code != 0 || len(first.writeOpens()) == 0 {
			t.Errorf("set %q: exit %d, opened for writing %q, stderr %q; want exit 0 and writes", c.args, first.Code, first.writeOpens(), first.Stderr)
			continue
		}
		again := run(t, true, nil, argv...)
		if again.Code != 0 || strings.Contains(again.Stdout, " -> ") {
			t.Errorf("set %q, second run: exit %d, stdout %q, stderr %q", c.args, again.Code, again.Stdout, again.Stderr)
		}
		checkNoWrite(t, again)
		ran++
	}
	if ran == 0 {
		t.Fatal("no case ran")
	}
	force(t, d, "none")
}

// TestEveryKernelTunableAccepted: each file under queue/iosched/ of each
// scheduler the running kernel offers is accepted for it, with the value
// it holds (so nothing is written).
func TestEveryKernelTunableAccepted(t *testing.T) {
	b := setup(t)
	d := newLoop(t, "")
	checked := 0
	for _, s := range offeredBy(t, d) {
		if s == "none" {
			continue
		}
		force(t, d, s)
		dir := filepath.Join("/sys/block", d.Name, "queue/iosched")
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for _, n := range names {
			v := queueAttr(t, d, "iosched/"+n)
			o := run(t, true, nil, b.Static, "set", d.Name, s, "iosched/"+n+"="+v)
			if o.Code != 0 {
				t.Errorf("%s: iosched/%s=%s: exit %d, stderr %q", s, n, v, o.Code, o.Stderr)
			}
			checkNoWrite(t, o)
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no tunable checked: the kernel offers no scheduler with tunables")
	}
	t.Logf("%d tunables accepted", checked)
	force(t, d, "none")
}

// snapshotQueue reads every readable file directly under the disk's
// queue/ and queue/iosched/.
func snapshotQueue(t *testing.T, d *loopDev) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, dir := range []string{"", "iosched"} {
		p := filepath.Join("/sys/block", d.Name, "queue", dir)
		ents, err := os.ReadDir(p)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue
			}
			if s, err := readFile(filepath.Join(p, e.Name())); err == nil {
				m[filepath.Join(dir, e.Name())] = s
			}
		}
	}
	return m
}
