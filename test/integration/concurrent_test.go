package integration

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentSets starts 16 `iosched set` runs with different wishes on
// one disk at once, three rounds, the last under strace. Every run must
// end in exit 0 with its one-line report or exit 1 with a one-line error
// naming the disk, and the disk must be left with one of its offered
// schedulers active. (On 7.3 concurrent writers get EBUSY from
// down_write_trylock(&set->update_nr_hwq_lock) in elv_iosched_store(),
// which the helper retries; on 6.18 they serialise.)
func TestConcurrentSets(t *testing.T) {
	b := setup(t)
	d := newLoop(t, "")
	line, err := readFile(d.Sched)
	if err != nil {
		t.Fatal(err)
	}
	_, offered, err := parseLine(line)
	if err != nil {
		t.Fatal(err)
	}
	wishes := []string{
		"none", "mq-deadline", "kyber", "bfq", "deadline", "nosuch,kyber",
		"bfq,none", "kyber,mq-deadline", "mq-deadline,bfq", "none,kyber",
		"nosuch,bfq", "deadline,none", "none", "kyber", "bfq", "mq-deadline",
	}
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
					outs[i], errs[i] = runE(dirs[i], traced, nil, bin, "set", dev, w)
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
