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
	schedProp := queueattr.Property(queueattr.Scheduler)
	list := e.getenv(schedProp)
	props := e.udevProperties()
	if list == "" && len(props) == 0 {
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
	wanted, settings, bad := e.recordedPolicy(q, list, props, e.getenv)
	err = e.applyAll(q, wanted, settings, false)
	return errors.Join(append(bad, err)...)
}

// udevProperties lists the event's attribute properties (policyKeys).
func (e env) udevProperties() []string { return policyKeys(e.environ()) }

// policyKeys lists the attribute properties that are set among KEY=VALUE
// pairs, sorted by name so the order is stable; scheduler tunables come
// last, after the switch. An empty value is an override's opt-out: not
// listed.
func policyKeys(kvs []string) []string {
	var plain, tunes []string
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		name, ok := queueattr.FromProperty(k)
		switch {
		case !ok || name == queueattr.Scheduler || v == "":
		case strings.HasPrefix(name, queueattr.TunablePrefix):
			tunes = append(tunes, k)
		default:
			plain = append(plain, k)
		}
	}
	sort.Strings(plain)
	sort.Strings(tunes)
	return append(plain, tunes...)
}

// recordedPolicy parses a disk's policy: list is IOSCHED_SCHEDULER, keys
// the attribute properties (policyKeys), get reads a property. It never
// gives up on good input: each bad property comes back as an error
// naming the disk, and the valid settings still count.
func (e env) recordedPolicy(q sysfs.Queue, list string, keys []string, get func(string) string) (wanted []string, settings []setting, bad []error) {
	schedProp := queueattr.Property(queueattr.Scheduler)
	if list != "" {
		var err error
		if wanted, err = sched.ParseList(list); err != nil {
			// Keep the scheduler as it is; the attributes still apply.
			bad = append(bad, fmt.Errorf("%s: %s=%q: %w", q.Disk, schedProp, list, err))
			wanted = nil
		}
	}
	for _, k := range keys {
		name, _ := queueattr.FromProperty(k)
		v := get(k)
		s, err := parseSetting(name, v)
		switch {
		case errors.Is(err, queueattr.ErrBadValue):
			// The message names the attribute and the value already.
			bad = append(bad, fmt.Errorf("%s: %s: %w", q.Disk, clip(k), err))
			continue
		case err != nil:
			bad = append(bad, fmt.Errorf("%s: %s=%q: %w", q.Disk, clip(k), v, err))
			continue
		}
		s.from = k
		settings = append(settings, s)
	}
	settings, badTunes := e.checkTunables(q, wanted, settings)
	for _, err := range badTunes {
		bad = append(bad, fmt.Errorf("%w; skipped", err))
	}
	return wanted, settings, bad
}
