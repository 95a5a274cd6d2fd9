// Package apply brings one disk's queue to a wanted state, reading first
// and writing only what would change, because every write of
// queue/scheduler freezes the queue even when nothing changes.
package apply

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"time"

	"github.com/iosched/iosched/helper/sched"
)

// ErrGone means the disk went away between reading and writing; callers
// treat it as nothing to do.
var ErrGone = errors.New("device went away")

// ErrUnavailable means no scheduler of the wanted list can be used.
var ErrUnavailable = errors.New("no wanted scheduler is available")

// ErrNotApplied means the write succeeded but reading back shows another
// value, e.g. because another writer switched it in between.
var ErrNotApplied = errors.New("not applied")

// Queue is the queue/ directory of one disk: sysfs.Queue, or a model of
// the kernel in tests.
type Queue interface {
	Read(attr string) (string, error)
	Write(attr, value string) error
	Path(attr string) string
	Name() string
}

// Disk applies settings to one whole disk's queue.
type Disk struct {
	Queue Queue
	// Loadable reports whether the kernel could load a module for a
	// scheduler that the disk does not list yet (kmod.Index.Loadable).
	Loadable func(name string) (bool, error)
	DryRun   bool
	// BusyFor bounds how long EBUSY is retried (7.3 returns it when
	// another writer holds the tag set's update_nr_hwq_lock).
	BusyFor time.Duration
	Sleep   func(time.Duration) // nil means time.Sleep

	// futile records, per ATTR=VALUE, a write this Disk made that did
	// not hold, so that it is not made again (NewDisk makes it).
	futile map[string]string
}

// NewDisk returns a Disk for q that remembers futile writes.
func NewDisk(q Queue) Disk {
	return Disk{Queue: q, futile: map[string]string{}}
}

// DefaultBusyFor is long enough for a few dozen concurrent switches of
// ~16-40 ms each, short enough for udev's event timeout.
const DefaultBusyFor = 3 * time.Second

// Result says what Scheduler did.
type Result struct {
	From        string   // active scheduler before
	To          string   // active scheduler after (or that would be, on a dry run)
	Changed     bool     // a write was made (or would be, on a dry run)
	Unavailable []string // wanted names skipped because the disk cannot use them
}

// String renders the one line the commands print, without the disk name.
func (r Result) String() string {
	var b strings.Builder
	if r.Changed {
		fmt.Fprintf(&b, "%s -> %s", r.From, r.To)
	} else {
		fmt.Fprintf(&b, "%s already active", r.To)
	}
	if len(r.Unavailable) > 0 {
		fmt.Fprintf(&b, " (unavailable: %s)", strings.Join(r.Unavailable, ","))
	}
	return b.String()
}

const schedAttr = "scheduler"

// Scheduler takes the first name of wanted that the disk can use and
// writes it only if it is not already active, then reads back to confirm.
func (d Disk) Scheduler(wanted []string) (Result, error) {
	line, err := d.readLine()
	if err != nil {
		return Result{}, err
	}
	return d.SchedulerFrom(line, wanted)
}

// SchedulerFrom is Scheduler for a caller that has just read and parsed
// queue/scheduler itself, as `iosched status` has.
func (d Disk) SchedulerFrom(line sched.Line, wanted []string) (Result, error) {
	res := Result{From: line.Active, To: line.Active}
	for _, w := range wanted {
		name, offered := line.Offers(w)
		if offered && sched.Matches(line.Active, w) {
			return res, nil
		}
		if !offered {
			ok, err := d.loadable(sched.Effective(w))
			if err != nil {
				return res, fmt.Errorf("%s: %w", d.Queue.Name(), err)
			}
			if !ok {
				res.Unavailable = append(res.Unavailable, w)
				continue
			}
			name = sched.Effective(w)
		}
		if d.DryRun {
			res.To, res.Changed = name, true
			return res, nil
		}
		after, err := d.write(name)
		if errors.Is(err, syscall.EINVAL) {
			// The kernel knows no such elevator (module missing or
			// refused): the next wish may do.
			res.Unavailable = append(res.Unavailable, w)
			continue
		}
		if err != nil {
			return res, err
		}
		res.To, res.Changed = after.Active, after.Active != line.Active
		if !sched.Matches(after.Active, name) {
			return res, fmt.Errorf("%s: wrote %q but %s reads %q: %w",
				d.Queue.Name(), name, d.Queue.Path(schedAttr), after.Active, ErrNotApplied)
		}
		return res, nil
	}
	return res, fmt.Errorf("%s: none of %s can be used (offers %s): %w",
		d.Queue.Name(), strings.Join(wanted, ","), strings.Join(line.Offered, " "), ErrUnavailable)
}

func (d Disk) loadable(name string) (bool, error) {
	if d.Loadable == nil {
		return false, nil
	}
	return d.Loadable(name)
}

func (d Disk) readLine() (sched.Line, error) {
	s, err := d.Queue.Read(schedAttr)
	if err != nil {
		if gone(err) {
			return sched.Line{}, fmt.Errorf("%s: %w: %w", d.Queue.Name(), ErrGone, err)
		}
		return sched.Line{}, err
	}
	l, err := sched.Parse(s)
	if err != nil {
		return sched.Line{}, fmt.Errorf("%s: %w", d.Queue.Path(schedAttr), err)
	}
	return l, nil
}

// write writes name and returns the line read back.
func (d Disk) write(name string) (sched.Line, error) {
	err := d.writeRetry(schedAttr, name, func() (bool, error) {
		l, err := d.readLine()
		return err == nil && sched.Matches(l.Active, name), err
	})
	if err != nil {
		return sched.Line{}, err
	}
	return d.readLine()
}

// writeRetry writes value to attr. EBUSY (7.3 returns it for scheduler
// and nr_requests writes when another writer holds the tag set's
// update_nr_hwq_lock) is retried with a growing, jittered pause; before
// each retry done() reads again, since the writer we collided with may
// have done our work.
func (d Disk) writeRetry(attr, value string, done func() (bool, error)) error {
	sleep := d.Sleep
	if sleep == nil {
		sleep = time.Sleep
	}
	busyFor := d.BusyFor
	if busyFor == 0 {
		busyFor = DefaultBusyFor
	}
	pause, waited, tries := time.Millisecond, time.Duration(0), 0
	for {
		tries++
		err := d.Queue.Write(attr, value)
		if err == nil {
			return nil
		}
		if gone(err) {
			return fmt.Errorf("%s: %w: %w", d.Queue.Name(), ErrGone, err)
		}
		if !errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("%s: %w", d.Queue.Name(), err)
		}
		if waited >= busyFor {
			return fmt.Errorf("%s: still busy after %d tries in %v: %w", d.Queue.Name(), tries, waited.Round(time.Millisecond), err)
		}
		p := pause/2 + rand.N(pause)
		sleep(p)
		waited += p
		pause = min(2*pause, 64*time.Millisecond)
		ok, err := done()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
}

// gone reports the errors a disk that is being removed returns:
// elv_iosched_store() gives -ENOENT once the queue is unregistered, and
// open or read of a removed kernfs node gives ENOENT or ENODEV.
func gone(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENODEV)
}
