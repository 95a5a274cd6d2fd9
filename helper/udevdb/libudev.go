//go:build cgo

package udevdb

import (
	"fmt"

	udev "github.com/jochenvg/go-udev"
)

// Available reports whether Policy can read the database.
const Available = true

// ctx is the one libudev context of the process: `iosched status` looks up
// every disk, and a context per lookup buys nothing.
var ctx udev.Udev

// Policy reads the device's property list through libudev, once, and
// keeps the properties that carry a setting. udev stores no empty
// property (ENV{KEY}="" removes KEY), so an opted-out setting is absent.
func Policy(disk string) (map[string]string, error) {
	// go-udev's constructors return nil instead of an error.
	d := ctx.NewDeviceFromSubsystemSysname("block", disk)
	if d == nil {
		return nil, fmt.Errorf("udev: no device block/%s", disk)
	}
	// A device udevd has not processed has no record, so no property a
	// rule set. Asking first also spares libudev re-opening the missing
	// record once for each of the kernel's properties.
	if !d.IsInitialized() {
		return map[string]string{}, nil
	}
	return policyOnly(d.Properties()), nil
}
