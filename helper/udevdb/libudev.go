//go:build cgo

package udevdb

import (
	"fmt"

	udev "github.com/jochenvg/go-udev"
)

// Available reports whether Property can read the database.
const Available = true

// Property reads one property through libudev. go-udev's constructors
// return nil instead of an error and PropertyValue cannot tell unset from
// empty, so both are checked here.
func Property(disk, key string) (string, bool, error) {
	var u udev.Udev
	d := u.NewDeviceFromSubsystemSysname("block", disk)
	if d == nil {
		return "", false, fmt.Errorf("udev: no device block/%s", disk)
	}
	v, ok := d.Properties()[key]
	return v, ok, nil
}
