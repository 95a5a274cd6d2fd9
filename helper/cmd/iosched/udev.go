package main

import (
	"errors"
	"fmt"

	"github.com/iosched/iosched/helper/blockdev"
	"github.com/iosched/iosched/helper/policy"
	"github.com/iosched/iosched/helper/sysfs"
)

// cmdUdev is run by a RUN+= rule with the event's properties as its
// environment. Whatever is not for us is success: udev only logs our
// output at debug level, so the exit status is all it shows.
//
// It never gives up on good input: every valid setting is applied
// (the scheduler first), each bad property is reported on a line of its
// own naming the disk, and then the exit status is 1.
func cmdUdev(e env, args []string) error {
	pos, err := parseArgs(newFlagSet("udev"), args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("udev takes no arguments; it reads the event from the environment")
	}
	action, devtype := e.getenv("ACTION"), e.getenv("DEVTYPE")
	if action != "add" && action != "change" {
		return nil
	}
	if s := e.getenv("SUBSYSTEM"); s != "" && s != "block" {
		return nil
	}
	if devtype != "disk" {
		return nil
	}
	props := e.udevProperties()
	if !policy.Asks(e.getenv, props) {
		return nil
	}
	devpath := e.getenv("DEVPATH")
	if devpath == "" {
		return usagef("udev: DEVPATH is not set (run from a udev rule, or use 'iosched set')")
	}
	dev, err := e.resolver().FromDevpath(devpath)
	if errors.Is(err, blockdev.ErrNotFound) {
		// Removed before we ran: the remove event follows.
		return writeOut(e, devpath+": went away, nothing done\n")
	}
	if errors.Is(err, blockdev.ErrNotDisk) {
		// It exists, so it did not go away: the event is not what
		// ACTION, SUBSYSTEM and DEVTYPE said.
		return fmt.Errorf("udev: DEVPATH %w", err)
	}
	if err != nil {
		return inputError(err)
	}
	if dev.Partition() {
		return nil
	}
	q := sysfs.Queue{FS: e.sys, Disk: dev.Disk}
	if !q.Has("scheduler") {
		return writeOut(e, dev.Disk+": no I/O scheduler, nothing to do\n")
	}
	return e.applyRecorded(e.disk(q), props, e.getenv, false)
}

// applyRecorded applies what the properties record to d and prints
// what it did; bad input, reported, makes the exit status 1.
func (e env) applyRecorded(d policy.Disk, keys []string, get func(string) string, dryRun bool) error {
	r, bad := d.ApplyRecorded(keys, get, dryRun)
	return errors.Join(append(bad, r.Err(), writeOut(e, r.Text(dryRun)))...)
}

// udevProperties lists the event's attribute properties (policy.Keys).
func (e env) udevProperties() []string { return policy.Keys(e.environ()) }
