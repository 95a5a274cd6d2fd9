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
func (e env) applyAll(q sysfs.Queue, wanted []string, settings []setting, dryRun bool) error {
	d := apply.Disk{
		Queue:  q,
		DryRun: dryRun,
		Loadable: func(name string) (bool, error) {
			return e.modules().Loadable(name)
		},
	}
	suffix := ""
	if dryRun {
		suffix = " (dry run)"
	}
	var errs []error
	schedOK := true
	if wanted != nil {
		res, err := d.Scheduler(wanted)
		switch {
		case errors.Is(err, apply.ErrGone):
			fmt.Fprintf(e.stdout, "%s: went away, nothing done\n", q.Disk)
			return nil
		case err != nil:
			errs, schedOK = append(errs, err), false
		case res.Changed:
			fmt.Fprintf(e.stdout, "%s: %s%s\n", q.Disk, res, suffix)
		default:
			fmt.Fprintf(e.stdout, "%s: %s\n", q.Disk, res)
		}
	}
	for _, s := range settings {
		if s.spec.Kind == queueattr.Tunable && !schedOK {
			errs = append(errs, fmt.Errorf("%s: %s not set: the scheduler was not applied", q.Disk, s.spec.Name))
			continue
		}
		res, err := d.Attr(s.spec, s.value)
		switch {
		case errors.Is(err, apply.ErrGone):
			fmt.Fprintf(e.stdout, "%s: went away, nothing done\n", q.Disk)
			return nil
		case err != nil:
			errs = append(errs, err)
		case res.Changed:
			fmt.Fprintf(e.stdout, "%s: %s%s\n", q.Disk, res, suffix)
		default:
			fmt.Fprintf(e.stdout, "%s: %s\n", q.Disk, res)
		}
	}
	return errors.Join(errs...)
}
