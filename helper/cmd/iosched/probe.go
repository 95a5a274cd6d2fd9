package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/iosched/iosched/helper/loopdev"
	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/sched"
	"github.com/iosched/iosched/helper/sysfs"
)

// controlAttr never freezes (queue_ra_store takes only limits_lock): the
// cost of any sysfs write on this machine.
const controlAttr = "read_ahead_kb"

// cmdProbe times unchanged writes on a loop device it attaches itself;
// the device goes away with autoclear when the probe ends, even if it dies.
func cmdProbe(e env, args []string) error {
	fs := newFlagSet("probe")
	runs := fs.Int("runs", 10, "unchanged writes per attribute (median reported)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *runs < 1 || *runs > 1000 {
		return usagef("probe takes only --runs N (1 to 1000)")
	}
	if e.geteuid() != 0 {
		return errors.New("probe needs root: it attaches a loop device and writes its queue attributes")
	}
	dev, err := loopdev.New(os.TempDir(), 16<<20)
	if err != nil {
		return fmt.Errorf("probe: attach a loop device: %w", err)
	}
	defer dev.Close()
	q := sysfs.Queue{FS: e.sys, Disk: dev.Name}

	attrs := queueattr.FreezingNames()
	attrs = append(attrs, controlAttr)
	type row struct {
		attr   string
		median time.Duration
		note   string
	}
	var rows []row
	var control time.Duration
	for _, a := range attrs {
		v, err := q.Read(a)
		if err != nil {
			rows = append(rows, row{attr: a, note: "not readable here"})
			continue
		}
		if a == "scheduler" {
			l, err := sched.Parse(v)
			if err != nil {
				return fmt.Errorf("%s: %w", q.Path(a), err)
			}
			v = l.Active
		}
		m, err := timeWrites(q.Path(a), v, *runs)
		if err != nil {
			rows = append(rows, row{attr: a, note: err.Error()})
			continue
		}
		rows = append(rows, row{attr: a, median: m})
		if a == controlAttr {
			control = m
		}
	}
	var u unix.Utsname
	_ = unix.Uname(&u)
	fmt.Fprintf(e.stdout, "probe: %s on kernel %s, median of %d unchanged writes each\n",
		dev.Name, unix.ByteSliceToString(u.Release[:]), *runs)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ATTRIBUTE\tMEDIAN\tFREEZES")
	var frozen []string
	for _, r := range rows {
		switch {
		case r.note != "":
			fmt.Fprintf(tw, "%s\t-\t%s\n", r.attr, r.note)
		case r.attr == controlAttr:
			fmt.Fprintf(tw, "%s\t%s\t(control: never freezes)\n", r.attr, ms(r.median))
		default:
			// A freeze waits for an RCU grace period: milliseconds, where
			// a plain sysfs write costs microseconds.
			f := r.median > time.Millisecond && r.median > 20*control
			if f {
				frozen = append(frozen, r.attr)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", r.attr, ms(r.median), yesNo(&f))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(frozen) == 0 {
		fmt.Fprintln(e.stdout, "verdict: this kernel does not freeze the queue for unchanged writes")
	} else {
		fmt.Fprintf(e.stdout, "verdict: this kernel freezes the queue for unchanged writes of %v: use iosched\n", frozen)
	}
	return nil
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
