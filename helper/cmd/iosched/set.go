package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/iosched/iosched/helper/apply"
	"github.com/iosched/iosched/helper/blockdev"
	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/sched"
	"github.com/iosched/iosched/helper/sysfs"
)

// setting is one ATTR=VALUE of the command line or the udev properties.
type setting struct {
	spec  queueattr.Spec
	value string
}

func cmdSet(e env, args []string) error {
	fs := flag.NewFlagSet("set", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	dryRun := fs.Bool("dry-run", false, "say what would change, write nothing")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() < 2 {
		return usagef("set takes DEVICE and SCHEDULER[,SCHEDULER...] and/or ATTR=VALUE, got %d arguments", fs.NArg())
	}
	devArg, rest := fs.Arg(0), fs.Args()[1:]
	var wanted []string
	if !strings.Contains(rest[0], "=") {
		var err error
		if wanted, err = sched.ParseList(rest[0]); err != nil {
			return usagef("%s: %w", devArg, err)
		}
		rest = rest[1:]
	}
	var settings []setting
	for _, kv := range rest {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return usagef("%s: %q: want ATTR=VALUE (the scheduler list goes first)", devArg, kv)
		}
		s, err := parseSetting(name, value)
		if err != nil {
			return usagef("%s: %w", devArg, err)
		}
		settings = append(settings, s)
	}
	dev, err := e.resolver().Resolve(devArg)
	if err != nil {
		return inputError(err)
	}
	q := sysfs.Queue{FS: e.sys, Disk: dev.Disk}
	if wanted != nil && !q.Has("scheduler") {
		return fmt.Errorf("%s: no %s: this device has no I/O scheduler", dev.Disk, q.Path("scheduler"))
	}
	return e.applyAll(q, wanted, settings, *dryRun)
}

func parseSetting(name, value string) (setting, error) {
	spec, err := queueattr.Lookup(name)
	if err != nil {
		return setting{}, err
	}
	if err := spec.Check(value); err != nil {
		return setting{}, err
	}
	return setting{spec, value}, nil
}

func (e env) resolver() blockdev.Resolver {
	return blockdev.Resolver{Sys: e.sys, DevNum: e.devNum}
}

// inputError turns errors about malformed input into usage errors (exit 2).
func inputError(err error) error {
	if errors.Is(err, blockdev.ErrBadName) || errors.Is(err, sched.ErrBadName) {
		return usageError{err}
	}
	return err
}

// applyAll sets the scheduler first (a switch resets nr_requests and
// replaces the iosched/ tunables), then each attribute in order. A failed
// attribute does not stop the others; all failures are returned.
//
// A first pass only reads. When it finds nothing to change, that is the
// answer, and no lock was taken: the common case stays lock-free. Else
// the real pass runs under the disk's lock and reads everything again,
// since another run may have changed it meanwhile.
func (e env) applyAll(q sysfs.Queue, wanted []string, settings []setting, dryRun bool) error {
	p := e.pass(q, wanted, settings, true)
	if dryRun || (!p.changed && len(p.errs) == 0) {
		p.print(e, dryRun)
		return errors.Join(p.errs...)
	}
	// One iosched run per disk at a time: 6.18 kernels oops when two
	// writers of queue/scheduler overlap (see sysfs.Queue.Lock).
	unlock, err := q.Lock(sysfs.LockWait)
	if err != nil {
		return err
	}
	defer unlock()
	p = e.pass(q, wanted, settings, false)
	p.print(e, false)
	return errors.Join(p.errs...)
}

// passResult is what one pass over a disk found or did.
type passResult struct {
	lines   []string // one per scheduler or attribute, without the disk name
	changed bool     // something was (or would be) written
	gone    bool     // the disk went away: nothing else counts
	errs    []error
	disk    string
}

func (p passResult) print(e env, dryRun bool) {
	if p.gone {
		fmt.Fprintf(e.stdout, "%s: went away, nothing done\n", p.disk)
		return
	}
	for _, l := range p.lines {
		if dryRun && strings.Contains(l, " -> ") {
			l += " (dry run)"
		}
		fmt.Fprintf(e.stdout, "%s: %s\n", p.disk, l)
	}
}

func (e env) pass(q apply.Queue, wanted []string, settings []setting, dryRun bool) passResult {
	d := apply.Disk{
		Queue:  q,
		DryRun: dryRun,
		Loadable: func(name string) (bool, error) {
			return e.modules().Loadable(name)
		},
	}
	p := passResult{disk: q.Name()}
	note := func(res fmt.Stringer, changed bool, err error) bool {
		switch {
		case errors.Is(err, apply.ErrGone):
			p.gone, p.errs = true, nil
			return false
		case err != nil:
			p.errs = append(p.errs, err)
		default:
			p.lines = append(p.lines, res.String())
			p.changed = p.changed || changed
		}
		return true
	}
	schedOK, schedChanged := true, false
	if wanted != nil {
		res, err := d.Scheduler(wanted)
		if !note(res, res.Changed, err) {
			return p
		}
		schedOK, schedChanged = err == nil, res.Changed
	}
	for _, s := range settings {
		if s.spec.Kind == queueattr.Tunable && (!schedOK || dryRun && schedChanged) {
			if !schedOK {
				p.errs = append(p.errs, fmt.Errorf("%s: %s not set: the scheduler was not applied", q.Name(), s.spec.Name))
			} else {
				// The new scheduler's tunables exist only after the switch.
				p.lines = append(p.lines, fmt.Sprintf("%s -> %s after the switch", s.spec.Name, s.value))
			}
			continue
		}
		res, err := d.Attr(s.spec, s.value)
		if !note(res, res.Changed, err) {
			return p
		}
	}
	return p
}
