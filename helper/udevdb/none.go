//go:build !cgo

package udevdb

// Available reports whether Policy can read the database.
const Available = false

// Policy always fails in a build without cgo.
func Policy(disk string) (map[string]string, error) {
	return nil, ErrUnavailable
}
