// Package sysfs reads and writes block-device attributes under a sysfs
// root that is a parameter, so tests run against fixture trees and
// production passes "/sys".
package sysfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// FS is the root of a sysfs tree, "/sys" on a real system.
type FS string

// Default is the real sysfs mount.
const Default FS = "/sys"

// Path joins p below the root.
func (fs FS) Path(p ...string) string {
	return filepath.Join(append([]string{string(fs)}, p...)...)
}

// Disks lists the disks under block/, sorted.
func (fs FS) Disks() ([]string, error) {
	dir := fs.Path("block")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list disks in %s: %w", dir, err)
	}
	names := make([]string, 0, len(ents))
	for _, ent := range ents {
		names = append(names, ent.Name())
	}
	return names, nil
}

// maxAttrSize bounds every read: sysfs attributes fit a page, and a single
// bounded read means a broken driver cannot make us loop.
const maxAttrSize = 4096

// ReadFile returns the contents of one attribute file with one bounded
// read. It uses open(2) and read(2) directly: os.Open would also try to
// register each file with the runtime's poller, two more system calls per
// file for `iosched status` over many disks.
func ReadFile(path string) (string, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	defer syscall.Close(fd)
	var buf [maxAttrSize]byte
	var n int
	for {
		n, err = syscall.Read(fd, buf[:])
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return string(buf[:n]), nil
}

// WriteFile writes value to an existing attribute file with a single
// write(2). It never creates a file and does not follow a symlink in the
// last path component, so a bad name can only fail, not write elsewhere.
func WriteFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s for writing: %w", path, unwrapPath(err))
	}
	_, werr := f.Write([]byte(value))
	cerr := f.Close()
	if werr != nil {
		return fmt.Errorf("write %q to %s: %w", value, path, unwrapPath(werr))
	}
	if cerr != nil {
		return fmt.Errorf("write %q to %s: %w", value, path, unwrapPath(cerr))
	}
	return nil
}

// unwrapPath drops os.PathError/SyscallError layers: our messages already
// name the file, and callers test the errno with errors.Is either way.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err
	}
	return err
}

// Queue is the queue/ directory of one whole disk.
type Queue struct {
	FS   FS
	Disk string // kernel name of the whole disk, e.g. "sda"
}

// Name returns the disk's kernel name.
func (q Queue) Name() string { return q.Disk }

// Path returns the path of a queue attribute such as "scheduler" or
// "iosched/read_expire".
func (q Queue) Path(attr string) string {
	return q.FS.Path("block", q.Disk, "queue", attr)
}

// Read returns a queue attribute with surrounding white space removed.
func (q Queue) Read(attr string) (string, error) {
	if err := checkAttr(attr); err != nil {
		return "", fmt.Errorf("%s: %w", q.Disk, err)
	}
	s, err := ReadFile(q.Path(attr))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(s), nil
}

// ReadDisk returns an attribute of the disk itself (attr relative to
// /sys/block/DISK, e.g. "ro" or "mq/0/nr_tags"), white space removed.
func (q Queue) ReadDisk(attr string) (string, error) {
	if err := checkAttr(attr); err != nil {
		return "", fmt.Errorf("%s: %w", q.Disk, err)
	}
	s, err := ReadFile(q.FS.Path("block", q.Disk, attr))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(s), nil
}

// Write writes a queue attribute. attr must stay inside queue/.
func (q Queue) Write(attr, value string) error {
	if err := checkAttr(attr); err != nil {
		return fmt.Errorf("%s: %w", q.Disk, err)
	}
	return WriteFile(q.Path(attr), value)
}

// Has reports whether the queue attribute exists.
func (q Queue) Has(attr string) bool {
	if checkAttr(attr) != nil {
		return false
	}
	_, err := os.Stat(q.Path(attr))
	return err == nil
}

// ErrBadAttr is returned for attribute names that would leave queue/.
var ErrBadAttr = errors.New("bad queue attribute name")

func checkAttr(attr string) error {
	if attr == "" || strings.HasPrefix(attr, "/") || strings.ContainsAny(attr, "\x00\n") {
		return fmt.Errorf("%w %q", ErrBadAttr, attr)
	}
	for _, part := range strings.Split(attr, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("%w %q", ErrBadAttr, attr)
		}
	}
	return nil
}
