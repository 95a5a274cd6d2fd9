package queueattr

import "strings"

// Scheduler is the name of the queue's scheduler file, queue/scheduler;
// its values are matched by package sched, not by a Spec.
const Scheduler = "scheduler"

// The udev properties that carry a policy. A property name cannot hold
// the '/' of iosched/NAME, so tunables get a prefix of their own.
const (
	propScheduler = "IOSCHED_SCHEDULER"
	propAttr      = "IOSCHED_ATTR_"
	propTune      = "IOSCHED_TUNE_"
)

// CmdlineProperty carries the kernel command line's iosched.scheduler
// when it names disks: the rules copy it there (udev's IMPORT{cmdline}
// cannot pick one disk's entry), and the helper picks the disk's entry
// (package policy).
const CmdlineProperty = "IOSCHED_CMDLINE"

// What 60-iosched.rules keeps beside the list it composes: the class's
// own list and the kernel command line's two parameters as found, so
// that the helper can tell where the list came from and fall back to
// the class when the command line's part is malformed (package policy).
const (
	ClassProperty            = "IOSCHED_CLASS_SCHEDULER"
	CmdlineElevatorProperty  = "IOSCHED_CMDLINE_ELEVATOR"
	CmdlineSchedulerProperty = "IOSCHED_CMDLINE_SCHEDULER"
)

// IsPolicyProperty reports whether a udev property is one iosched
// reads: a setting's (FromProperty) or one the rules keep beside them.
func IsPolicyProperty(prop string) bool {
	if _, ok := FromProperty(prop); ok {
		return true
	}
	switch prop {
	case CmdlineProperty, ClassProperty, CmdlineElevatorProperty, CmdlineSchedulerProperty:
		return true
	}
	return false
}

// Property returns the udev property that carries a setting of name:
// IOSCHED_SCHEDULER for "scheduler", IOSCHED_ATTR_wbt_lat_usec for
// "wbt_lat_usec", IOSCHED_TUNE_fifo_batch for "iosched/fifo_batch".
func Property(name string) string {
	if name == Scheduler {
		return propScheduler
	}
	if t, ok := strings.CutPrefix(name, TunablePrefix); ok {
		return propTune + t
	}
	return propAttr + name
}

// FromProperty is Property's inverse: the setting a udev property names,
// and whether it names one at all. The name is not checked against the
// known attributes (Lookup does that).
func FromProperty(prop string) (name string, ok bool) {
	switch {
	case prop == propScheduler:
		return Scheduler, true
	case strings.HasPrefix(prop, propAttr) && len(prop) > len(propAttr):
		return prop[len(propAttr):], true
	case strings.HasPrefix(prop, propTune) && len(prop) > len(propTune):
		return TunablePrefix + prop[len(propTune):], true
	}
	return "", false
}
