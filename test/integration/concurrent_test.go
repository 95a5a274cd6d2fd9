package integration

import (
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/iosched/iosched/helper/disklock"
)

// TestConcurrentSets starts 16 `iosched set` runs with different wishes on
// one disk at once, three rounds, the last under strace. Every run must
// end in exit 0 with its one-line report or exit 1 with a one-line error
// naming the disk, and the disk must be left with one of its offered
// schedulers active.
//
// Overlapping writers of one queue/scheduler crash a 6.18 kernel: it
// takes update_nr_hwq_lock shared in elv_iosched_store(), so two
// elevator_change_done() run at once; seen on 6.18.44 as "sysfs: cannot
// create duplicate filename .../queue/iosched", a general protection fault
// in blk_mq_free_rqs() and a queue hung for good. 7.3 takes the lock
// exclusively (trylock, EBUSY). So the helper serialises its runs per disk
// with a lock file in /run/iosched (helper/disklock), and this test first
// checks that it does before it starts 16 writers at once.
func TestConcurrentSets(t *testing.T) {
	b := setup(t)
	d := newLoop(t, "")
	offered := offeredBy(t, d)
	wishes := []string{
		"none", "mq-deadline", "kyber", "bfq", "deadline", "nosuch,kyber",
		"bfq,none", "kyber,mq-deadline", "mq-deadline,bfq", "none,kyber",
		"nosuch,bfq", "deadline,none", "none", "kyber", "bfq", "mq-deadline",
	}
	checkSerialised(t, b, d)
	kernelLog := kmsgCheck(t)
	defer kernelLog()
	okLine := regexp.MustCompile(`^` + regexp.QuoteMeta(d.Name) +
		`: ([a-z0-9_-]+ already active|[a-z0-9_-]+ -> [a-z0-9_-]+)( \(unavailable: [a-z0-9_,-]+\))?\n$`)
	for round := 1; round <= 3; round++ {
		traced := round == 3
		t.Run(fmt.Sprintf("round %d traced=%v", round, traced), func(t *testing.T) {
			force(t, d, "none")
			outs := make([]outcome, len(wishes))
			errs := make([]error, len(wishes))
			dirs := make([]string, len(wishes))
			for i := range dirs {
				dirs[i] = t.TempDir()
			}
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i, w := range wishes {
				bin := b.Cgo
				if i%2 == 1 {
					bin = b.Static
				}
				dev := d.Dev
				if i%3 == 0 {
					dev = d.Name
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					outs[i], errs[i] = runE(dirs[i], nil, traced, nil, bin, "set", dev, w)
				}()
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("run %d (%s): %v", i, wishes[i], err)
				}
			}
			counts := map[string]int{}
			for i, o := range outs {
				switch o.Code {
				case 0:
					counts["ok"]++
					if !okLine.MatchString(o.Stdout) {
						t.Errorf("run %d (%s): exit 0 but stdout %q, want one line matching %v", i, wishes[i], o.Stdout, okLine)
					}
				case 1:
					counts["error"]++
					msg := strings.TrimSuffix(o.Stderr, "\n")
					if msg == "" || strings.Contains(msg, "\n") || !strings.Contains(msg, d.Name) {
						t.Errorf("run %d (%s): exit 1 with stderr %q, want one line naming %s", i, wishes[i], o.Stderr, d.Name)
					}
					t.Logf("run %d (%s): exit 1: %s", i, wishes[i], msg)
				default:
					t.Errorf("run %d (%s): exit %d, want 0 or 1; stdout %q stderr %q", i, wishes[i], o.Code, o.Stdout, o.Stderr)
				}
				if traced {
					for _, p := range o.writeOpens() {
						if p != d.Real {
							t.Errorf("run %d (%s) opened %s for writing; only %s is allowed:\n%s", i, wishes[i], p, d.Real, o.openLog())
						}
					}
				}
			}
			t.Logf("%d runs: %d exit 0, %d exit 1", len(outs), counts["ok"], counts["error"])
			after, err := readFile(d.Sched)
			if err != nil {
				t.Fatal(err)
			}
			act, afterOffered, err := parseLine(after)
			if err != nil {
				t.Fatalf("after the runs: %v", err)
			}
			if !slices.Contains(offered, act) || !slices.Equal(offered, afterOffered) {
				t.Errorf("after the runs %s reads %q: active %s, want one of %v offered as before", d.Sched, after, act, offered)
			}
		})
	}
}

// checkSerialised holds the per-disk lock (helper/disklock in
// /run/iosched) and starts a change: the helper must wait for the lock,
// writing nothing meanwhile, and complete once it is released. Without
// it, the test stops here rather than risk a kernel oops.
func checkSerialised(t *testing.T, b bins, d *loopDev) {
	t.Helper()
	force(t, d, "none")
	release, err := disklock.Default.Lock(d.Name, 0)
	if err != nil {
		t.Fatalf("take the lock of %s: %v", d.Name, err)
	}
	locked := true
	unlock := func() {
		if locked {
			release()
			locked = false
		}
	}
	defer unlock()
	type result struct {
		o   outcome
		err error
	}
	done := make(chan result, 1)
	dir := t.TempDir()
	go func() {
		o, err := runE(dir, nil, false, nil, b.Static, "set", d.Name, "kyber")
		done <- result{o, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("iosched set did not wait for the lock of %s in %s (exit %d, %q, %q): "+
			"not starting 16 concurrent writers, which can oops a 6.18 kernel", d.Name, disklock.Default.Path, r.o.Code, r.o.Stdout, r.o.Stderr)
	case <-time.After(500 * time.Millisecond):
	}
	if got := active(t, d); got != "none" {
		t.Fatalf("while the lock was held %s changed to %s", d.Sched, got)
	}
	unlock()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if diff := cmp.Diff(got{0, d.Name + ": none -> kyber\n"}, r.o.got()); diff != "" {
		t.Fatalf("iosched set after the lock was released (-want +got):\n%s\nstderr: %s", diff, r.o.Stderr)
	}
}

var kernelTrouble = regexp.MustCompile(`Oops|BUG:|general protection|cannot create duplicate filename|WARNING:|hung_task|blocked for more than`)

// kmsgCheck notes the end of the kernel log and returns a function that
// fails the test if the kernel logged trouble since then.
func kmsgCheck(t *testing.T) func() {
	t.Helper()
	before, err := exec.Command("dmesg").Output()
	if err != nil {
		t.Logf("dmesg: %v: not checking the kernel log", err)
		return func() {}
	}
	n := strings.Count(string(before), "\n")
	return func() {
		after, err := exec.Command("dmesg").Output()
		if err != nil {
			t.Errorf("dmesg: %v", err)
			return
		}
		lines := strings.Split(string(after), "\n")
		if n > len(lines) {
			n = 0 // the ring buffer wrapped
		}
		for _, l := range lines[n:] {
			if kernelTrouble.MatchString(l) {
				t.Errorf("kernel log during the concurrent runs: %s", l)
			}
		}
	}
}
