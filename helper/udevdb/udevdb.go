// Package udevdb reads the properties udev recorded for a block device:
// the rules store the wanted scheduler list as IOSCHED_SCHEDULER, and
// `iosched status` shows it beside what the kernel reports.
package udevdb

import "errors"

// ErrUnavailable means this build cannot read the udev database (it was
// built without cgo, so without libudev).
var ErrUnavailable = errors.New("udev database not readable by this build (built without libudev)")

// Lookup returns the value of property key for the block device named
// disk, and whether udev holds that property at all.
type Lookup func(disk, key string) (value string, ok bool, err error)
