package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/iosched/iosched/helper/loopdev"
	"github.com/iosched/iosched/helper/sched"
	"github.com/iosched/iosched/helper/sysfs"
	"github.com/iosched/iosched/test/testhost"
)

// disk is a loop device this program attached.
type disk struct {
	dev     *loopdev.Device
	q       sysfs.Queue
	devpath string // udev's DEVPATH: /devices/virtual/block/loopN
	orig    string // active scheduler at attach time
}

// loopSet is every loop device attached, and the state cleanup undoes.
// The devices are attached with autoclear (helper/loopdev): the kernel
// detaches each when its last file is closed, so even a killed benchmark
// leaves none behind, and while we hold it open nobody else can detach
// it and reuse the number.
type loopSet struct {
	mu      sync.Mutex
	disks   []*disk
	mounted bool // testhost.Mount's view is over /sys/block
	closed  bool // cleanup ran: attach must not leave a new device behind
	tmp     string
	once    sync.Once
}

func (s *loopSet) onSignal() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	sig := <-c
	fmt.Fprintf(os.Stderr, "helperbench: %v: detaching loop devices\n", sig)
	s.cleanup()
	os.Exit(130)
}

// cleanup unmounts the /sys/block view, restores each disk's scheduler and
// detaches it. It runs once.
func (s *loopSet) cleanup() {
	s.once.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.mounted {
			if err := testhost.Unmount(); err != nil {
				fmt.Fprintf(os.Stderr, "helperbench: %v\n", err)
			}
			s.mounted = false
		}
		for _, d := range s.disks {
			if cur, err := active(d.q); err == nil && d.orig != "" && cur != d.orig {
				if err := d.q.Write("scheduler", d.orig); err != nil {
					fmt.Fprintf(os.Stderr, "helperbench: restore %s: %v\n", d.q.Name(), err)
				}
			}
			if err := d.dev.Close(); err != nil {
				fmt.Fprintf(os.Stderr, "helperbench: %v\n", err)
			}
		}
		s.disks = nil
		s.closed = true
		if s.tmp != "" {
			os.RemoveAll(s.tmp)
		}
	})
}

// attach attaches a fresh loop device to a sparse file of size bytes.
func (s *loopSet) attach(size int64) (*disk, error) {
	dev, err := loopdev.New(s.tmp, size)
	if err != nil {
		return nil, err
	}
	d := &disk{dev: dev, q: sysfs.Queue{FS: sysfs.Default, Disk: dev.Name}}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		dev.Close()
		return nil, errors.New("interrupted")
	}
	s.disks = append(s.disks, d)
	s.mu.Unlock()
	real, err := filepath.EvalSymlinks(sysfs.Default.Path("block", dev.Name))
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", dev.Name, err)
	}
	d.devpath = strings.TrimPrefix(real, string(sysfs.Default))
	d.orig, err = active(d.q)
	return d, err
}

// active reads the queue's active scheduler.
func active(q sysfs.Queue) (string, error) {
	line, err := sysfs.ReadFile(q.Path("scheduler"))
	if err != nil {
		return "", err
	}
	l, err := sched.Parse(line)
	if err != nil {
		return "", fmt.Errorf("%s: %w", q.Name(), err)
	}
	return l.Active, nil
}

// ensure puts the disk into state name (untimed; compares first, so set
// up never freezes the queue for nothing).
func (d *disk) ensure(name string) error {
	cur, err := active(d.q)
	if err != nil || cur == name {
		return err
	}
	if err := d.q.Write("scheduler", name); err != nil {
		return fmt.Errorf("set up: %w", err)
	}
	if cur, err = active(d.q); err == nil && cur != name {
		err = fmt.Errorf("%s reads %s after writing %s", d.q.Path("scheduler"), cur, name)
	}
	return err
}

// mount binds the view dir over /sys/block (in our private namespace).
func (s *loopSet) mount(dir string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := testhost.Mount(dir); err != nil {
		return err
	}
	s.mounted = true
	return nil
}

func (s *loopSet) unmount() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := testhost.Unmount(); err != nil {
		return err
	}
	s.mounted = false
	return nil
}
