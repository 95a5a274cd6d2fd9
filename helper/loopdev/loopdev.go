// Package loopdev creates throwaway loop devices for `iosched probe` and
// the helper benchmark, so that measuring the kernel never touches a disk
// in use.
package loopdev

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Device is an attached loop device. It is set up with LO_FLAGS_AUTOCLEAR:
// the kernel detaches it when Close drops the last reference, and also if
// this process dies first.
type Device struct {
	Name string // kernel name, e.g. "loop7"
	dev  *os.File
}

// New attaches a fresh loop device to a sparse file of size bytes created
// in dir; the file is unlinked at once, so nothing is left behind.
func New(dir string, size int64) (*Device, error) {
	back, err := os.CreateTemp(dir, "iosched-probe-*.img")
	if err != nil {
		return nil, fmt.Errorf("create backing file in %s: %w", dir, err)
	}
	defer back.Close()
	if err := os.Remove(back.Name()); err != nil {
		return nil, fmt.Errorf("unlink %s: %w", back.Name(), err)
	}
	if err := back.Truncate(size); err != nil {
		return nil, fmt.Errorf("size %s: %w", back.Name(), err)
	}
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/loop-control: %w", err)
	}
	defer ctl.Close()
	// Another process may take the free device between GET_FREE and
	// CONFIGURE: the kernel then says EBUSY and we ask again.
	for try := 0; try < 10; try++ {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return nil, fmt.Errorf("LOOP_CTL_GET_FREE: %w", err)
		}
		name := fmt.Sprintf("loop%d", n)
		dev, err := openNode(filepath.Join("/dev", name))
		if err != nil {
			return nil, err
		}
		cfg := unix.LoopConfig{Fd: uint32(back.Fd()), Info: unix.LoopInfo64{Flags: unix.LO_FLAGS_AUTOCLEAR}}
		err = unix.IoctlLoopConfigure(int(dev.Fd()), &cfg)
		if errors.Is(err, unix.EBUSY) {
			dev.Close()
			continue
		}
		if err != nil {
			dev.Close()
			return nil, fmt.Errorf("LOOP_CONFIGURE /dev/%s: %w", name, err)
		}
		return &Device{Name: name, dev: dev}, nil
	}
	return nil, errors.New("no free loop device after 10 tries")
}

// openNode opens the device node, waiting briefly for devtmpfs to create
// it after LOOP_CTL_GET_FREE added the device.
func openNode(path string) (*os.File, error) {
	for i := 0; ; i++ {
		f, err := os.OpenFile(path, os.O_RDWR|unix.O_CLOEXEC, 0)
		if err == nil || !errors.Is(err, os.ErrNotExist) || i == 100 {
			if err != nil {
				return nil, fmt.Errorf("open %s: %w", path, err)
			}
			return f, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Node returns the device node, e.g. "/dev/loop7".
func (d *Device) Node() string { return "/dev/" + d.Name }

// Close detaches the device (through autoclear).
func (d *Device) Close() error {
	if err := d.dev.Close(); err != nil {
		return fmt.Errorf("close /dev/%s: %w", d.Name, err)
	}
	return nil
}

// ReadOnly reports whether the loop device at node (a /dev path) was
// attached read-only (LO_FLAGS_READ_ONLY, losetup -r), which no sysfs
// attribute shows: its ro file also reads 1 after `blockdev --setro` on
// a device attached writable. It opens the node read-only, which starts
// no udev change event (only a close after writing does).
func ReadOnly(node string) (bool, error) {
	fd, err := unix.Open(node, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return false, fmt.Errorf("open %s: %w", node, err)
	}
	defer unix.Close(fd)
	info, err := unix.IoctlLoopGetStatus64(fd)
	if err != nil {
		return false, fmt.Errorf("LOOP_GET_STATUS64 on %s: %w", node, err)
	}
	return info.Flags&unix.LO_FLAGS_READ_ONLY != 0, nil
}
