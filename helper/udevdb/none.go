//go:build !cgo

package udevdb

// Available reports whether Property can read the database.
const Available = false

// Property always fails in a build without cgo.
func Property(disk, key string) (string, bool, error) {
	return "", false, ErrUnavailable
}
