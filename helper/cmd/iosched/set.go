package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/iosched/iosched/helper/apply"
	"github.com/iosched/iosched/helper/blockdev"
	"github.com/iosched/iosched/helper/disklock"
	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/sched"
	"github.com/iosched/iosched/helper/sysfs"
)

// setting is one ATTR=VALUE of the command line or the udev properties.
type setting struct {
	spec  queueattr.Spec
	value string
	from  string // what asked for it, for messages: "iosched/fifo_batch" or "IOSCHED_TUNE_fifo_batch"
}

func cmdSet(e env, args []string) error {
	fs := newFlagSet("set")
	dryRun := fs.Bool("dry-run", false, "say what would change, write nothing")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usagef("set takes DEVICE and SCHEDULER[,SCHEDULER...] and/or ATTR=VALUE, got %d arguments", len(pos))
	}
	devArg, rest := pos[0], pos[1:]
	var wanted []string
	if !strings.Contains(rest[0], "=") {
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
	settings, bad := e.checkTunables(q, wanted, settings)
	if len(bad) > 0 {
		// Refused before any write: a switch followed by a failed tunable
		// would leave the disk half set.
		return usageError{errors.Join(bad...)}
	}
	err = e.applyAll(q, wanted, settings, *dryRun)
	if errors.Is(err, queueattr.ErrBadValue) {
		// A value the kernel would not keep, refused before its write:
		// bad input, exit 2. (udev mode reports it and exits 1.)
		return usageError{err}
	}
	return err
}

func parseSetting(name, value string) (setting, error) {
	spec, err := queueattr.Lookup(name)
	if err != nil {
		return setting{}, err
	}
	if err := spec.Check(value); err != nil {
		return setting{}, err
	}
	return setting{spec, value, name}, nil
}

func (e env) resolver() blockdev.Resolver {
	return blockdev.Resolver{Sys: e.sys, DevNum: e.devNum}
}

// disk is the apply.Disk of q, with this environment's module index.
func (e env) disk(q apply.Queue, dryRun bool) apply.Disk {
	d := apply.NewDisk(q)
	d.DryRun = dryRun
	d.Loadable = func(name string) (bool, error) {
		return e.modules().Loadable(name)
	}
	return d
}

// inputError turns errors about malformed input into usage errors (exit 2).
func inputError(err error) error {
	if errors.Is(err, blockdev.ErrBadName) || errors.Is(err, sched.ErrBadName) {
		return usageError{err}
	}
	return err
}

// checkTunables drops each iosched/NAME setting that the scheduler
// active after the switch does not have (queueattr.Tunables), returning
// one error for each, before anything is written. Only reads: a dry run
// of the switch says which scheduler that will be. When it cannot tell
// (no usable scheduler, one iosched does not know), the setting stays
// and the pass reports what happens.
func (e env) checkTunables(q sysfs.Queue, wanted []string, settings []setting) ([]setting, []error) {
	if !slices.ContainsFunc(settings, func(s setting) bool { return s.spec.Kind == queueattr.Tunable }) {
		return settings, nil
	}
	var target string
	if wanted != nil {
		if res, err := e.disk(q, true).Scheduler(wanted); err == nil {
			target = res.To
		}
	} else if v, err := q.Read("scheduler"); err == nil {
		if l, err := sched.Parse(v); err == nil {
			target = l.Active
		}
	}
	var keep []setting
	var bad []error
	for _, s := range settings {
		if s.spec.Kind != queueattr.Tunable || target == "" {
			keep = append(keep, s)
			continue
		}
		name := strings.TrimPrefix(s.spec.Name, queueattr.TunablePrefix)
		has, known := queueattr.Tunables[target]
		switch {
		case sched.IsNone(target):
			bad = append(bad, fmt.Errorf("%s: %s=%q: scheduler none has no tunables", q.Disk, clip(s.from), s.value))
		case known && !slices.Contains(has, name):
			bad = append(bad, fmt.Errorf("%s: %s=%q: %s is not a tunable of %s (it has %s)",
				q.Disk, clip(s.from), s.value, clip(name), target, strings.Join(has, " ")))
		default:
			keep = append(keep, s)
		}
	}
	return keep, bad
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
		return errors.Join(append(p.errs, p.print(e, dryRun))...)
	}
	// One iosched run per disk at a time: 6.18 kernels oops when two
	// writers of queue/scheduler overlap (package disklock says why).
	unlock, err := e.locks.Lock(q.Disk, disklock.Wait)
	if errors.Is(err, os.ErrPermission) && !anyWritable(q, wanted, settings) {
		// Not root, so no lock; but no write can succeed either, so no
		// writers can overlap: the pass reports the file the kernel
		// refuses, as the user expects.
		unlock, err = func() {}, nil
	}
	if err != nil {
		return err
	}
	defer unlock()
	p = e.pass(q, wanted, settings, false)
	return errors.Join(append(p.errs, p.print(e, false))...)
}

// anyWritable reports whether this process may open any file the pass
// would write (access(2) with the effective ids).
func anyWritable(q sysfs.Queue, wanted []string, settings []setting) bool {
	var paths []string
	if wanted != nil {
		paths = append(paths, q.Path(queueattr.Scheduler))
	}
	for _, s := range settings {
		paths = append(paths, q.Path(s.spec.Name))
	}
	for _, p := range paths {
		if unix.Faccessat(unix.AT_FDCWD, p, unix.W_OK, unix.AT_EACCESS) == nil {
			return true
		}
	}
	return false
}

// passResult is what one pass over a disk found or did.
type passResult struct {
	lines   []string // one per scheduler or attribute, without the disk name
	changed bool     // something was (or would be) written
	gone    bool     // the disk went away: nothing else counts
	errs    []error
	disk    string
}

// print writes the pass's lines in one write; failing to write them is
// an error, since they are the command's answer.
func (p passResult) print(e env, dryRun bool) error {
	var b strings.Builder
	if p.gone {
		fmt.Fprintf(&b, "%s: went away, nothing done\n", p.disk)
	}
	for _, l := range p.lines {
		if p.gone {
			break
		}
		if dryRun && strings.Contains(l, " -> ") {
			l += " (dry run)"
		}
		fmt.Fprintf(&b, "%s: %s\n", p.disk, l)
	}
	if b.Len() == 0 {
		return nil
	}
	return writeOut(e, b.String())
}

// legacyNames are scheduler names of the block layer before blk-mq,
// gone since Linux 5.0, with what to ask for instead. ("deadline" still
// works: it is mq-deadline's alias.)
var legacyNames = map[string]string{
	"noop": `the kernel calls it "none" now`,
	"cfq":  `removed in Linux 5.0; "bfq" is its successor`,
}

// hint names the legacy names among unavailable, or "".
func hint(unavailable []string) string {
	var h []string
	for _, n := range unavailable {
		if why, ok := legacyNames[n]; ok {
			h = append(h, n+": "+why)
		}
	}
	return strings.Join(h, "; ")
}

func (e env) pass(q apply.Queue, wanted []string, settings []setting, dryRun bool) passResult {
	d := e.disk(q, dryRun)
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
	schedOK, schedChanged, hintLine := true, false, ""
	after := d // the queue as the settings will find it
	if wanted != nil {
		res, err := d.Scheduler(wanted)
		if errors.Is(err, apply.ErrUnavailable) {
			if h := hint(wanted); h != "" {
				err = fmt.Errorf("%w (%s)", err, h)
			}
		} else if err == nil {
			hintLine = hint(res.Unavailable)
		}
		if !note(res, res.Changed, err) {
			return p
		}
		schedOK, schedChanged = err == nil, res.Changed
		if dryRun && schedChanged {
			after = d.AfterSwitch(res.From, res.To)
		}
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
		res, err := after.Attr(s.spec, s.value)
		if !note(res, res.Changed, err) {
			return p
		}
	}
	if hintLine != "" {
		p.lines = append(p.lines, "hint: "+hintLine)
	}
	return p
}
