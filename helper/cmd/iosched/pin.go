package main

import (
	"fmt"
	"path/filepath"

	"github.com/iosched/iosched/helper/pin"
	"github.com/iosched/iosched/helper/policy"
)

// pinFile is the pins file under the filesystem root.
func (e env) pinFile() (pin.File, error) {
	if e.root == "" {
		return pin.File{}, fmt.Errorf("no filesystem root to keep pins under")
	}
	return pin.File{Dir: filepath.Join(e.root, "etc/udev/rules.d")}, nil
}

// pinTarget resolves DEVICE and reads the identity udev gives it.
func (e env) pinTarget(arg string) (disk string, props map[string]string, err error) {
	dev, err := e.resolver().Resolve(arg)
	if err != nil {
		return "", nil, inputError(err)
	}
	props, err = e.udev(dev.Disk)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", dev.Disk, err)
	}
	return dev.Disk, props, nil
}

func cmdPin(e env, args []string) error {
	pos, err := parseArgs(newFlagSet("pin"), args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usagef("pin takes DEVICE and SCHEDULER[,SCHEDULER...] and/or ATTR=VALUE, got %d arguments", len(pos))
	}
	p, err := policy.Parse(pos[1:])
	if err != nil {
		return usagef("%s: %w", pos[0], err)
	}
	disk, props, err := e.pinTarget(pos[0])
	if err != nil {
		return err
	}
	key, value, err := pin.Identity(props)
	if err != nil {
		return fmt.Errorf("%s: %w: nothing pinned (a rule by kernel name, or iosched.scheduler=%s:LIST, is what remains)", disk, err, disk)
	}
	rule := p.Pin(key, value)
	if err := rule.Check(); err != nil {
		return usagef("%s: %w", disk, err)
	}
	f, err := e.pinFile()
	if err != nil {
		return err
	}
	if err := f.Set(rule); err != nil {
		return fmt.Errorf("%s: %w", disk, err)
	}
	return writeOut(e, fmt.Sprintf("%s: pinned by %s: %s (%s; from the disk's next event)\n", disk, rule.ID(), p, f.Path()))
}

func cmdUnpin(e env, args []string) error {
	pos, err := parseArgs(newFlagSet("unpin"), args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("unpin takes one DEVICE, got %d arguments", len(pos))
	}
	disk, props, err := e.pinTarget(pos[0])
	if err != nil {
		return err
	}
	// The identity the pin matched, as udev recorded it; else the one a
	// pin would match now.
	id := props[pin.Property]
	if id == "" {
		key, value, err := pin.Identity(props)
		if err != nil {
			return fmt.Errorf("%s: %w: no pin to remove", disk, err)
		}
		id = key + "=" + value
	}
	f, err := e.pinFile()
	if err != nil {
		return err
	}
	found, err := f.Remove(id)
	if err != nil {
		return fmt.Errorf("%s: %w", disk, err)
	}
	if !found {
		return fmt.Errorf("%s: no pin for %s in %s", disk, id, f.Path())
	}
	return writeOut(e, fmt.Sprintf("%s: unpinned %s (%s; from the disk's next event)\n", disk, id, f.Path()))
}
