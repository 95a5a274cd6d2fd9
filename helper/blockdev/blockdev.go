// Package blockdev resolves what a user or udev names (a kernel name, a
// /dev path or a /sys path) to the whole disk whose queue holds the
// scheduler. A partition resolves to its disk.
package blockdev

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/iosched/iosched/helper/sysfs"
)

// NameMax is the longest kernel block device name: disk and partition
// names are formatted into char[BDEVNAME_SIZE] (32, include/linux/blkdev.h),
// NUL included.
const NameMax = 31

// PathMax bounds /dev and /sys paths (PATH_MAX, NUL included).
const PathMax = 4095

// ErrBadName is returned for arguments rejected before anything is opened.
var ErrBadName = errors.New("bad device name")

// ErrNotFound is returned when the argument names no block device.
var ErrNotFound = errors.New("no such block device")

// ErrNotDisk is returned for a path that exists but is no disk that
// /sys/block lists (nor a partition of one).
var ErrNotDisk = errors.New("not a block device")

// Device is a resolved block device.
type Device struct {
	Name string // kernel name of what was given, e.g. "sda1"
	Disk string // kernel name of the whole disk, e.g. "sda"
}

// Partition reports whether the argument named a partition.
func (d Device) Partition() bool { return d.Name != d.Disk }

// Resolver resolves device arguments under a sysfs root.
type Resolver struct {
	Sys sysfs.FS
	// DevNum returns the device number of a block special file; nil means
	// stat(2). Tests replace it, since fixture trees hold no device nodes.
	DevNum func(path string) (major, minor uint32, err error)
}

// Resolve maps a kernel name ("sda", "nvme0n1p2"), a /dev path (symlinks
// such as /dev/disk/by-id/... included) or a path under the sysfs root to
// its device and whole disk.
func (r Resolver) Resolve(arg string) (Device, error) {
	if err := check(arg); err != nil {
		return Device{}, err
	}
	var sysdir string
	switch {
	case strings.HasPrefix(arg, string(r.Sys)+"/"):
		sysdir = arg
	case strings.HasPrefix(arg, "/"):
		major, minor, err := r.devNum(arg)
		if err != nil {
			return Device{}, err
		}
		sysdir = r.Sys.Path("dev", "block", fmt.Sprintf("%d:%d", major, minor))
	default:
		if _, ok := r.listedDisk(arg); ok {
			return Device{Name: arg, Disk: arg}, nil
		}
		sysdir = r.Sys.Path("class", "block", arg)
	}
	return r.fromSysdir(arg, sysdir)
}

// Disks resolves each argument to its whole disk (Resolve), each disk
// once, in the order first named; the first bad argument is the error.
func (r Resolver) Disks(args []string) ([]string, error) {
	var disks []string
	for _, a := range args {
		dev, err := r.Resolve(a)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(disks, dev.Disk) {
			disks = append(disks, dev.Disk)
		}
	}
	return disks, nil
}

// listedDisk is the fast path for a whole disk: /sys/block lists whole
// disks only, each as a symlink to its directory under devices/. One
// readlink answers what the general path answers with a stat per path
// component, and udev and scripts name whole disks.
func (r Resolver) listedDisk(name string) (devpath string, ok bool) {
	link, err := os.Readlink(r.Sys.Path("block", name))
	if err != nil || !strings.HasPrefix(link, "../devices/") || filepath.Base(link) != name {
		return "", false
	}
	return filepath.Join("/block", link), true
}

// FromDevpath resolves a udev DEVPATH ("/devices/.../block/sda"), which
// is relative to the sysfs root.
func (r Resolver) FromDevpath(devpath string) (Device, error) {
	if err := check(devpath); err != nil {
		return Device{}, err
	}
	if !strings.HasPrefix(devpath, "/devices/") {
		return Device{}, fmt.Errorf("%w %q: DEVPATH must start with /devices/", ErrBadName, devpath)
	}
	if name := filepath.Base(devpath); len(name) <= NameMax {
		if p, ok := r.listedDisk(name); ok && p == filepath.Clean(devpath) {
			return Device{Name: name, Disk: name}, nil
		}
	}
	return r.fromSysdir(devpath, r.Sys.Path(devpath))
}

func (r Resolver) fromSysdir(arg, sysdir string) (Device, error) {
	real, err := filepath.EvalSymlinks(sysdir)
	if notFound(err) {
		return Device{}, fmt.Errorf("%w %q: %w", ErrNotFound, arg, err)
	}
	if err != nil {
		return Device{}, fmt.Errorf("device %q: %w", arg, err)
	}
	root, err := filepath.EvalSymlinks(string(r.Sys))
	if err != nil {
		return Device{}, fmt.Errorf("sysfs root %s: %w", r.Sys, err)
	}
	if !strings.HasPrefix(real, root+"/") {
		return Device{}, fmt.Errorf("%w %q: resolves outside %s", ErrNotDisk, arg, r.Sys)
	}
	dev := Device{Name: filepath.Base(real), Disk: filepath.Base(real)}
	diskdir := real
	if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
		diskdir = filepath.Dir(real)
		dev.Disk = filepath.Base(diskdir)
	}
	// Only what /sys/block lists is a disk: this rejects other sysfs
	// directories given by path.
	disk, err := filepath.EvalSymlinks(r.Sys.Path("block", dev.Disk))
	if err != nil || disk != diskdir {
		return Device{}, fmt.Errorf("%w %q: %s is not a disk in %s", ErrNotDisk, arg, dev.Disk, r.Sys.Path("block"))
	}
	return dev, nil
}

func (r Resolver) devNum(path string) (uint32, uint32, error) {
	if r.DevNum != nil {
		return r.DevNum(path)
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		if notFound(err) {
			return 0, 0, fmt.Errorf("%w %q: %w", ErrNotFound, path, err)
		}
		return 0, 0, fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return 0, 0, fmt.Errorf("%w %q: not a block special file", ErrNotDisk, path)
	}
	return unix.Major(st.Rdev), unix.Minor(st.Rdev), nil
}

// notFound reports lookup errors that mean "no such device here".
func notFound(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) ||
		errors.Is(err, unix.ENAMETOOLONG) || errors.Is(err, unix.ELOOP)
}

// check rejects arguments before any file is touched: control bytes,
// "." and ".." components, over-long names, and relative paths.
func check(arg string) error {
	switch {
	case arg == "":
		return fmt.Errorf("%w: empty", ErrBadName)
	case strings.ContainsAny(arg, "\x00\n"):
		return fmt.Errorf("%w %q: contains NUL or newline", ErrBadName, arg)
	case len(arg) > PathMax:
		return fmt.Errorf("%w %.40q...: longer than %d bytes", ErrBadName, arg, PathMax)
	}
	if !strings.HasPrefix(arg, "/") {
		if strings.Contains(arg, "/") {
			return fmt.Errorf("%w %q: give a kernel name, a /dev path or a /sys path", ErrBadName, arg)
		}
		if arg == "." || arg == ".." {
			return fmt.Errorf("%w %q", ErrBadName, arg)
		}
		if len(arg) > NameMax {
			return fmt.Errorf("%w %q: longer than %d bytes", ErrBadName, arg, NameMax)
		}
		return nil
	}
	for _, part := range strings.Split(arg[1:], "/") {
		if part == "." || part == ".." {
			return fmt.Errorf("%w %q: contains %q", ErrBadName, arg, part)
		}
		if len(part) > unix.NAME_MAX {
			return fmt.Errorf("%w %.40q...: a component is longer than %d bytes", ErrBadName, arg, unix.NAME_MAX)
		}
	}
	return nil
}
