// Package udevdb reads the properties udev recorded for a block device:
// the rules store the wanted scheduler list as IOSCHED_SCHEDULER and
// queue attributes as IOSCHED_ATTR_*/IOSCHED_TUNE_*, and `iosched status`
// and `iosched apply` read them back.
package udevdb

import (
	"errors"

	"github.com/iosched/iosched/helper/pin"
	"github.com/iosched/iosched/helper/queueattr"
)

// ErrUnavailable means this build cannot read the udev database (it was
// built without cgo, so without libudev).
var ErrUnavailable = errors.New("udev database not readable by this build (built without libudev)")

// Lookup returns the policy properties udev holds for the block device
// named disk (Policy, or a fixture in tests).
type Lookup func(disk string) (map[string]string, error)

// policyOnly keeps the properties that carry a setting, as
// queueattr.FromProperty names them, those the rules keep beside them
// (the class's, the kernel command line's), and a pin's and the
// identities it matches.
func policyOnly(all map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range all {
		if queueattr.IsPolicyProperty(k) || pin.Names(k) {
			out[k] = v
		}
	}
	return out
}
