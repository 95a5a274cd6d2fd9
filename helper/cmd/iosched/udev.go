package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/iosched/iosched/helper/blockdev"
	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/sched"
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
	list := e.getenv(queueattr.Property(queueattr.Scheduler))
	settings, err := e.udevSettings()
	if err != nil {
		return usagef("%s: %w", devpath, err)
	}
	if list == "" && len(settings) == 0 {
		return nil
	}
	if devpath == "" {
		return usagef("udev: DEVPATH is not set (run from a udev rule, or use 'iosched set')")
	}
	var wanted []string
	if list != "" {
		if wanted, err = sched.ParseList(list); err != nil {
			return usagef("%s: %s: %w", devpath, queueattr.Property(queueattr.Scheduler), err)
		}
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

// udevSettings collects the attribute properties, sorted by name so the
// order is stable; scheduler tunables come last, after the switch.
func (e env) udevSettings() ([]setting, error) {
	var plain, tunes []string
	for _, kv := range e.environ() {
		k, _, _ := strings.Cut(kv, "=")
		name, ok := queueattr.FromProperty(k)
		switch {
		case !ok || name == queueattr.Scheduler:
		case strings.HasPrefix(name, queueattr.TunablePrefix):
			tunes = append(tunes, k)
		default:
			plain = append(plain, k)
		}
	}
	sort.Strings(plain)
	sort.Strings(tunes)
	var out []setting
	for _, k := range append(plain, tunes...) {
		v := e.getenv(k)
		if v == "" {
			continue // emptied by an override: opt out
		}
		name, _ := queueattr.FromProperty(k)
		s, err := parseSetting(name, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out = append(out, s)
	}
	return out, nil
}
