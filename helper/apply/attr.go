package apply

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/iosched/iosched/helper/queueattr"
)

// AttrResult says what Attr did.
type AttrResult struct {
	Attr    string
	From    string // value before ("" when it could not be read)
	To      string // value after (or wanted, on a dry run)
	Changed bool   // a write was made (or would be, on a dry run)
	// AfterSwitch: a dry run compared the value the attribute will have
	// after a scheduler switch (Disk.AfterSwitch) that resets it.
	AfterSwitch bool
}

func (r AttrResult) String() string {
	var s string
	if r.Changed {
		s = fmt.Sprintf("%s %s -> %s", r.Attr, questionIfUnread(r.From), r.To)
	} else {
		s = fmt.Sprintf("%s %s already set", r.Attr, r.To)
	}
	if r.AfterSwitch {
		s += " after the switch"
	}
	return s
}

// questionIfUnread shows a value that could not be read before the write
// as "?".
func questionIfUnread(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// ErrNoAttr means the queue has no such attribute: the device lacks the
// feature, or a scheduler tunable belongs to another scheduler.
var ErrNoAttr = errors.New("no such attribute on this queue")

// diskReader is a Queue that can also read attributes of its disk, which
// some outcomes depend on (queueattr.Reader's "../NAME").
type diskReader interface {
	ReadDisk(attr string) (string, error)
}

// reader is the queueattr.Reader of d's queue.
func (d Disk) reader() queueattr.Reader {
	return func(attr string) (string, error) {
		if a, ok := strings.CutPrefix(attr, "../"); ok {
			if dr, ok := d.Queue.(diskReader); ok {
				return dr.ReadDisk(a)
			}
			return "", fmt.Errorf("%s: %s: %w", d.Queue.Name(), attr, syscall.ENOENT)
		}
		return d.Queue.Read(attr)
	}
}

// Attr writes one queue attribute only when the kernel would change it
// and keep the value, then reads it back to confirm. A value the kernel
// would refuse, clamp or ignore on this queue is an error wrapping
// queueattr.ErrBadValue, returned before anything is opened for writing.
// A write whose outcome only the write could tell and that did not hold
// is reported, and not made again by this Disk.
func (d Disk) Attr(spec queueattr.Spec, want string) (AttrResult, error) {
	res := AttrResult{Attr: spec.Name, To: want}
	if sw, ok := d.Queue.(switched); ok {
		_, res.AfterSwitch = queueattr.SwitchResets(spec.Name, sw.from, sw.to, nil)
	}
	if err := spec.Check(want); err != nil {
		return res, fmt.Errorf("%s: %w", d.Queue.Name(), err)
	}
	cur, err := d.Queue.Read(spec.Name)
	switch {
	case errors.Is(err, syscall.ENOENT):
		return res, fmt.Errorf("%s: %s: %w", d.Queue.Name(), d.Queue.Path(spec.Name), ErrNoAttr)
	case errors.Is(err, syscall.EINVAL):
		// wbt_lat_usec reads EINVAL until wbt is set up on the queue
		// (queue_wb_lat_show): only a write can tell.
		cur = ""
	case err != nil:
		return res, err
	}
	res.From = cur
	read := d.reader()
	unchanged, err := spec.Unchanged(cur, want, read)
	if err != nil {
		return res, fmt.Errorf("%s: %w", d.Queue.Name(), err)
	}
	if unchanged {
		res.To = cur
		return res, nil
	}
	predicted := spec.Predict(want, read)
	if predicted.Kept != "" {
		res.To = predicted.Kept
	}
	key := spec.Name + "=" + want
	if why, ok := d.futile[key]; ok {
		return res, fmt.Errorf("%s: %s=%q not written again: %s: %w", d.Queue.Name(), spec.Name, want, why, ErrNotApplied)
	}
	res.Changed = true
	if d.DryRun {
		return res, nil
	}
	check := func() (bool, error) {
		after, err := d.Queue.Read(spec.Name)
		if err != nil {
			return false, err
		}
		res.To = after
		return predicted.Kept != "" && spec.Same(after, predicted.Kept), nil
	}
	if err := d.writeRetry(spec.Name, want, check); err != nil {
		return res, err
	}
	ok, err := check()
	if err != nil {
		return res, err
	}
	if !ok {
		why := fmt.Sprintf("wrote %q but %s reads %q", want, d.Queue.Path(spec.Name), res.To)
		if predicted.Effect == queueattr.Unknown {
			why += " (" + predicted.Why + ")"
		}
		if d.futile != nil {
			d.futile[key] = why
		}
		return res, fmt.Errorf("%s: %s: %w", d.Queue.Name(), why, ErrNotApplied)
	}
	return res, nil
}

// AfterSwitch returns d as its queue will read after a switch of the
// elevator from one scheduler to another, for a dry run: queue/scheduler
// shows the new one, and what the switch resets reads as the value it
// will have (queueattr.SwitchResets), or as unreadable (EINVAL, the
// "only a write can tell" of Attr) when that is not known.
func (d Disk) AfterSwitch(from, to string) Disk {
	d.Queue = switched{Queue: d.Queue, disk: d, from: from, to: to}
	return d
}

type switched struct {
	Queue
	disk     Disk
	from, to string
}

func (s switched) Read(attr string) (string, error) {
	if attr == schedAttr {
		return "[" + s.to + "]", nil
	}
	if after, resets := queueattr.SwitchResets(attr, s.from, s.to, s.disk.reader()); resets {
		if after == "" {
			return "", fmt.Errorf("%s: %s after the switch: %w", s.Queue.Name(), attr, syscall.EINVAL)
		}
		return after, nil
	}
	return s.Queue.Read(attr)
}

func (s switched) ReadDisk(attr string) (string, error) {
	return s.disk.reader()("../" + attr)
}
