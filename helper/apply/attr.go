package apply

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/iosched/iosched/helper/queueattr"
)

// AttrResult says what Attr did.
type AttrResult struct {
	Attr    string
	From    string // value before ("" when it could not be read)
	To      string // value after (or wanted, on a dry run)
	Changed bool   // a write was made (or would be, on a dry run)
}

func (r AttrResult) String() string {
	if r.Changed {
		return fmt.Sprintf("%s %s -> %s", r.Attr, dashIfEmpty(r.From), r.To)
	}
	return fmt.Sprintf("%s %s already set", r.Attr, r.To)
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// ErrNoAttr means the queue has no such attribute: the device lacks the
// feature, or a scheduler tunable belongs to another scheduler.
var ErrNoAttr = errors.New("no such attribute on this queue")

// Attr writes one queue attribute only when the kernel would change it,
// then reads it back to confirm.
func (d Disk) Attr(spec queueattr.Spec, want string) (AttrResult, error) {
	res := AttrResult{Attr: spec.Name, To: want}
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
	unchanged, err := spec.Unchanged(cur, want, d.Queue.Read)
	if err != nil {
		return res, fmt.Errorf("%s: %w", d.Queue.Name(), err)
	}
	if unchanged {
		res.To = cur
		return res, nil
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
		return spec.Unchanged(after, want, d.Queue.Read)
	}
	if err := d.writeRetry(spec.Name, want, check); err != nil {
		return res, err
	}
	ok, err := check()
	if err != nil {
		return res, err
	}
	if !ok {
		return res, fmt.Errorf("%s: wrote %q but %s reads %q: %w", d.Queue.Name(), want, d.Queue.Path(spec.Name), res.To, ErrNotApplied)
	}
	return res, nil
}
