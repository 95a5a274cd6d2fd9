//go:build cgo

package udevdb

import (
	"fmt"

	udev "github.com/jochenvg/go-udev"
)

// Available reports whether Property can read the database.
const Available = true

// ctx is the one libudev context of the process: `iosched status` looks up
// every disk, and a context per lookup buys nothing.
var ctx udev.Udev

// Property reads one property through libudev. go-udev's constructors
// return nil instead of an error. PropertyValue cannot tell unset from
// empty, and need not: udev stores no empty property (ENV{KEY}="" removes
// KEY), so "" is "unset". Asking for the one key, not the whole list, also
// spares libudev from retrying a missing database file once per property.
func Property(disk, key string) (string, bool, error) {
	d := ctx.NewDeviceFromSubsystemSysname("block", disk)
	if d == nil {
		return "", false, fmt.Errorf("udev: no device block/%s", disk)
	}
	v := d.PropertyValue(key)
	return v, v != "", nil
}
