package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/iosched/iosched/helper/apply"
	"github.com/iosched/iosched/helper/blockdev"
	"github.com/iosched/iosched/helper/sched"
	"github.com/iosched/iosched/helper/sysfs"
)

func cmdSet(e env, args []string) error {
	fs := flag.NewFlagSet("set", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	dryRun := fs.Bool("dry-run", false, "say what would change, write nothing")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() != 2 {
		return usagef("set takes DEVICE and SCHEDULER[,SCHEDULER...], got %d arguments", fs.NArg())
	}
	wanted, err := sched.ParseList(fs.Arg(1))
	if err != nil {
		return usagef("%s: %w", fs.Arg(0), err)
	}
	dev, err := e.resolver().Resolve(fs.Arg(0))
	if err != nil {
		return inputError(err)
	}
	q := sysfs.Queue{FS: e.sys, Disk: dev.Disk}
	if !q.Has("scheduler") {
		return fmt.Errorf("%s: no %s: this device has no I/O scheduler", dev.Disk, q.Path("scheduler"))
	}
	return e.applyScheduler(q, wanted, *dryRun)
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

func (e env) applyScheduler(q sysfs.Queue, wanted []string, dryRun bool) error {
	d := apply.Disk{
		Queue:  q,
		DryRun: dryRun,
		Loadable: func(name string) (bool, error) {
			return e.modules().Loadable(name)
		},
	}
	res, err := d.Scheduler(wanted)
	if errors.Is(err, apply.ErrGone) {
		fmt.Fprintf(e.stdout, "%s: went away, nothing done\n", q.Disk)
		return nil
	}
	if err != nil {
		return err
	}
	var note []string
	if dryRun && res.Changed {
		note = append(note, " (dry run)")
	}
	fmt.Fprintf(e.stdout, "%s: %s%s\n", q.Disk, res, strings.Join(note, ""))
	return nil
}
