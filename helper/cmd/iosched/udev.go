package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/iosched/iosched/helper/blockdev"
	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/sysfs"
)

// cmdUdev is run by a RUN+= rule with the event's properties as its
// environment. Whatever is not for us is success: udev only logs our
// output at debug level, so the exit status is all it shows.
func cmdUdev(e env, args []string) error {
	if len(args) != 0 {
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
	devpath := e.getenv("DEVPATH")
	wanted, settings, err := policyFrom(e.eventPolicy())
	if err != nil {
		return usagef("%s: %w", devpath, err)
	}
	if wanted == nil && len(settings) == 0 {
		return nil
	}
	if devpath == "" {
		return usagef("udev: DEVPATH is not set (run from a udev rule, or use 'iosched set')")
	}
	dev, err := e.resolver().FromDevpath(devpath)
	if errors.Is(err, blockdev.ErrNotFound) {
		// Removed before we ran: the remove event follows.
		fmt.Fprintf(e.stdout, "%s: went away, nothing done\n", devpath)
		return nil
	}
	if err != nil {
		return inputError(err)
	}
	if dev.Partition() {
		return nil
	}
	q := sysfs.Queue{FS: e.sys, Disk: dev.Disk}
	if !q.Has("scheduler") {
		fmt.Fprintf(e.stdout, "%s: no I/O scheduler, nothing to do\n", dev.Disk)
		return nil
	}
	return e.applyAll(q, wanted, settings, false)
}

// eventPolicy collects the event's properties that carry a setting.
func (e env) eventPolicy() map[string]string {
	props := map[string]string{}
	for _, kv := range e.environ() {
		k, v, _ := strings.Cut(kv, "=")
		if _, ok := queueattr.FromProperty(k); ok {
			props[k] = v
		}
	}
	return props
}
