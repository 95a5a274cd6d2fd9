// Package probe times unchanged writes of the scheduler and of each
// freezing queue attribute on a throwaway loop device, to tell whether
// the running kernel still freezes the queue for nothing.
package probe

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/iosched/iosched/helper/disklock"
	"github.com/iosched/iosched/helper/loopdev"
	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/sched"
	"github.com/iosched/iosched/helper/sysfs"
)

// Control does not freeze since the store fix (queue_ra_store takes
// only limits_lock; FreezeRanges has the kernels where it did): there it
// costs what any sysfs write costs on this machine.
const Control = "read_ahead_kb"

// measuredDoc is where people read the measured kernels' table.
const measuredDoc = "docs/kernels.md"

// Row is one setting the probe timed.
type Row struct {
	Attr   string // "scheduler" or a queue attribute
	Value  string // the value written; for the scheduler, the active one
	Median time.Duration
	Note   string // why there is no median
}

// Report is what the probe measured on its device.
type Report struct {
	Disk, Release string // the loop device; uname -r
	Runs          int
	Rows          []Row
}

// Settings lists what the probe times: the scheduler, the attributes
// that freeze on every kernel, those that froze on some (FreezeRanges),
// then the control.
func Settings() []string {
	s := queueattr.FreezingNames()
	for _, n := range queueattr.Names() {
		if n != Control && !slices.Contains(s, n) && queueattr.FreezeRanges(n) != nil {
			s = append(s, n)
		}
	}
	return append(s, Control)
}

// Run times runs unchanged writes of each setting on a loop device it
// attaches under tmp itself; the device goes away with autoclear when
// the probe ends, even if it dies. It needs root.
func Run(sys sysfs.FS, locks disklock.Dir, tmp string, runs int) (Report, error) {
	dev, err := loopdev.New(tmp, 16<<20)
	if err != nil {
		return Report{}, fmt.Errorf("probe: attach a loop device: %w", err)
	}
	defer dev.Close()
	// Its writes are iosched's like any other: under the disk's lock,
	// so that no other run writes the new device's scheduler meanwhile
	// (package disklock says why that matters).
	unlock, err := locks.Lock(dev.Name, disklock.Wait)
	if err != nil {
		return Report{}, fmt.Errorf("probe: %w", err)
	}
	defer unlock()
	q := sysfs.Queue{FS: sys, Disk: dev.Name}

	var u unix.Utsname
	_ = unix.Uname(&u)
	rep := Report{Disk: dev.Name, Release: unix.ByteSliceToString(u.Release[:]), Runs: runs}
	for _, a := range Settings() {
		v, err := q.Read(a)
		if err != nil {
			rep.Rows = append(rep.Rows, Row{Attr: a, Note: "not readable here"})
			continue
		}
		if a == queueattr.Scheduler {
			l, err := sched.Parse(v)
			if err != nil {
				return Report{}, fmt.Errorf("%s: %w", q.Path(a), err)
			}
			v = l.Active
		}
		m, err := timeWrites(q.Path(a), v, runs)
		if err != nil {
			rep.Rows = append(rep.Rows, Row{Attr: a, Value: v, Note: err.Error()})
			continue
		}
		rep.Rows = append(rep.Rows, Row{Attr: a, Value: v, Median: m})
	}
	return rep, nil
}

// Write prints the report beside the nearest measured kernel's cell of
// each setting (docs/kernels.md's "ms / freezes per write").
func (rep Report) Write(w io.Writer, measured []queueattr.MeasuredKernel) error {
	fmt.Fprintf(w, "probe: %s on kernel %s, median of %d unchanged writes each\n", rep.Disk, rep.Release, rep.Runs)
	k, kerr := queueattr.ParseKernel(rep.Release)
	near, found := queueattr.Nearest(k, measured)
	switch {
	case kerr != nil:
		fmt.Fprintf(w, "nearest measured kernel: none (%v)\n", kerr)
		found = false
	case !found:
		fmt.Fprintf(w, "nearest measured kernel: none in %s\n", queueattr.MeasuredFile)
	default:
		fmt.Fprintf(w, "nearest measured kernel: %s (%s), in ms / freezes per write\n", near.Release, measuredDoc)
	}
	// A freeze waits for an RCU grace period: milliseconds, where a plain
	// sysfs write costs microseconds. The control tells the two apart
	// only where it did not freeze itself (before 6.18 it does, and on
	// a 6.18.y without the store fix).
	var control time.Duration
	controlFroze := false
	for _, r := range rep.Rows {
		if r.Attr == Control && r.Note == "" {
			if r.Median > time.Millisecond {
				controlFroze = true
			} else {
				control = r.Median
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "ATTRIBUTE\tMEDIAN\tFREEZES"
	if found {
		head += "\t" + near.Release
	}
	fmt.Fprintln(tw, head)
	var frozen int
	for _, r := range rep.Rows {
		name, key := r.Attr, r.Attr
		if r.Attr == queueattr.Scheduler && r.Value != "" {
			name = fmt.Sprintf("%s (%s)", r.Attr, r.Value)
			key = queueattr.Scheduler + "=" + r.Value
		}
		median, verdict := "-", r.Note
		if r.Note == "" {
			median = ms(r.Median)
			verdict = "no"
			if r.Median > time.Millisecond && r.Median > 20*control {
				frozen++
				verdict = "yes"
			}
			if r.Attr == Control && !controlFroze {
				verdict = "(control)"
			}
		}
		line := name + "\t" + median + "\t" + verdict
		if found {
			cell := "not measured"
			if m, ok := near.Row(key); ok {
				cell = m.Cell()
			}
			line += "\t" + cell
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case controlFroze:
		fmt.Fprintf(w, "freezes: over 1 ms (no control: %s froze too)\n", Control)
	case control > 0:
		fmt.Fprintf(w, "freezes: over 1 ms and over 20 times %s (the control)\n", Control)
	default:
		fmt.Fprintf(w, "freezes: over 1 ms (no control: %s not timed)\n", Control)
	}
	var err error
	if frozen == 0 {
		_, err = fmt.Fprintln(w, "verdict: this kernel does not freeze the queue for unchanged writes")
	} else {
		n := fmt.Sprintf("%d settings", frozen)
		if frozen == 1 {
			n = "1 setting"
		}
		_, err = fmt.Fprintf(w, "verdict: this kernel freezes the queue for unchanged writes (%s)\n", n)
	}
	return err
}

// timeWrites times write(2) of value to path, the file opened once.
func timeWrites(path, value string, runs int) (time.Duration, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	buf := []byte(value)
	d := make([]time.Duration, 0, runs)
	for i := 0; i < runs; i++ {
		t := time.Now()
		if _, err := unix.Pwrite(int(f.Fd()), buf, 0); err != nil {
			return 0, fmt.Errorf("write %q to %s: %w", value, path, err)
		}
		d = append(d, time.Since(t))
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2], nil
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
}
