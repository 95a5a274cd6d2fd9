package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/iosched/iosched/helper/sysfs"
	"github.com/iosched/iosched/test/testhost"
)

// statusCounts are the numbers of disks `iosched status` is timed over.
var statusCounts = []int{1, 8, 64}

// statusResult holds the samples per build and disk count.
type statusResult struct {
	samples map[string][]time.Duration // key: statusKey(build, n)
}

func statusKey(build string, n int) string { return fmt.Sprintf("%s/%d", build, n) }

// statusScaling times `iosched status` over exactly 1, 8 and 64 attached
// loop devices, the measured disk among them: for each timed run a view
// holding only those disks' links is bound over /sys/block, in the
// benchmark's private mount namespace (testhost.BlockView).
func (b *bench) statusScaling() (*statusResult, error) {
	res := &statusResult{samples: map[string][]time.Duration{}}
	maxN := statusCounts[len(statusCounts)-1]
	names := []string{b.disk.q.Name()}
	for len(names) < maxN {
		d, err := b.loops.attach(1 << 20)
		if err != nil {
			return nil, err
		}
		names = append(names, d.q.Name())
	}
	views := map[int]string{}
	for _, n := range statusCounts {
		dir := filepath.Join(b.loops.tmp, fmt.Sprintf("block-%d", n))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
		if err := testhost.BlockView(sysfs.Default, dir, names[:n]...); err != nil {
			return nil, err
		}
		views[n] = dir
	}
	type job struct {
		build, bin string
		n          int
	}
	var jobs []job
	for _, n := range statusCounts {
		jobs = append(jobs, job{"cgo", b.bins.cgo, n}, job{"static", b.bins.static, n})
	}
	// One warm-up round, untimed; the order rotates each round.
	for round := -1; round < *runs; round++ {
		for k := range jobs {
			j := jobs[(k+max(round, 0))%len(jobs)]
			if err := b.loops.mount(views[j.n]); err != nil {
				return nil, err
			}
			d, outp, err := timeProc(nil, j.bin, "status")
			uerr := b.loops.unmount()
			if err != nil {
				return nil, fmt.Errorf("status over %d disks: %w", j.n, err)
			}
			if uerr != nil {
				return nil, uerr
			}
			if rows := strings.Count(outp, "\n") - 1; rows != j.n {
				return nil, fmt.Errorf("status over %d disks printed %d rows:\n%s", j.n, rows, outp)
			}
			if round >= 0 {
				key := statusKey(j.build, j.n)
				res.samples[key] = append(res.samples[key], d)
			}
		}
	}
	return res, nil
}

// slope is the per-disk cost of status for a build: (median(64) -
// median(1)) / 63.
func (r *statusResult) slope(build string) time.Duration {
	lo, hi := statusCounts[0], statusCounts[len(statusCounts)-1]
	return (summarize(r.samples[statusKey(build, hi)]).median - summarize(r.samples[statusKey(build, lo)]).median) / time.Duration(hi-lo)
}
