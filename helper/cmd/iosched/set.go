package main

import (
	"errors"
	"fmt"

	"github.com/iosched/iosched/helper/apply"
	"github.com/iosched/iosched/helper/blockdev"
	"github.com/iosched/iosched/helper/kmod"
	"github.com/iosched/iosched/helper/policy"
	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/sched"
	"github.com/iosched/iosched/helper/sysfs"
)

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
	devArg := pos[0]
	p, err := policy.Parse(pos[1:])
	if err != nil {
		return usagef("%s: %w", devArg, err)
	}
	dev, err := e.resolver().Resolve(devArg)
	if err != nil {
		return inputError(err)
	}
	q := sysfs.Queue{FS: e.sys, Disk: dev.Disk}
	if (p.Wanted != nil || p.Keep) && !q.Has(queueattr.Scheduler) {
		return fmt.Errorf("%s: no %s: this device has no I/O scheduler", dev.Disk, q.Path(queueattr.Scheduler))
	}
	d := e.disk(q)
	// One validation pass before any write: a refused setting after a
	// write of another would leave the disk half set.
	plan := d.Check(p)
	if len(plan.Refused) > 0 {
		return usageError{errors.Join(plan.Refused...)}
	}
	if *dryRun {
		return errors.Join(plan.Err(), writeOut(e, plan.Text(true)))
	}
	r := d.Apply(plan)
	return errors.Join(r.Err(), writeOut(e, r.Text(false)))
}

func (e env) resolver() blockdev.Resolver {
	return blockdev.Resolver{Sys: e.sys, DevNum: e.devNum}
}

// disk is the policy.Disk of q in this environment.
func (e env) disk(q apply.Queue) policy.Disk {
	return policy.Disk{
		Queue:    q,
		Sys:      e.sys,
		Locks:    e.locks,
		Dev:      e.dev,
		HZ:       e.hz,
		Loadable: kmod.LoadableOnce(e.modules),
	}
}

// inputError turns errors about malformed input into usage errors (exit 2).
func inputError(err error) error {
	if errors.Is(err, blockdev.ErrBadName) || errors.Is(err, sched.ErrBadName) {
		return usageError{err}
	}
	return err
}
