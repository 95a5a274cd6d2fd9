package main

import (
	"bufio"
	"errors"
	"fmt"

	"github.com/iosched/iosched/helper/policy"
	"github.com/iosched/iosched/helper/sysfs"
	"github.com/iosched/iosched/helper/udevdb"
)

// cmdApply brings disks to the policy udev recorded for them, without an
// event: the udev database stands in for the event's environment, and
// the writes go through the same compare-first path as `set` and `udev`.
func cmdApply(e env, args []string) error {
	fs := newFlagSet("apply")
	dryRun := fs.Bool("dry-run", false, "say what would change, write nothing")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	named := len(pos) > 0
	var disks []string
	if named {
		// Every argument is resolved before anything is written: bad
		// input is exit 2 with nothing done.
		disks, err = e.resolver().Disks(pos)
		err = inputError(err)
	} else {
		disks, err = e.sys.Disks()
	}
	if err != nil {
		return err
	}
	// Two lines a disk: one write(2) for all, as status does, but never
	// holding a disk's lines back past its errors on stderr. Output that
	// cannot be written is a failure: it is the command's answer.
	out := bufio.NewWriter(e.stdout)
	e.stdout = out
	failed := 0
	for _, disk := range disks {
		err := e.applyDisk(disk, named, *dryRun)
		if errors.Is(err, udevdb.ErrUnavailable) {
			return errors.Join(fmt.Errorf("apply: %w", err), flush(out))
		}
		if err != nil {
			failed++
			if ferr := flush(out); ferr != nil {
				return ferr
			}
			e.reportErr(err)
		}
	}
	if err := flush(out); err != nil {
		return err
	}
	if failed > 0 {
		return reported(exitFailure)
	}
	return nil
}

// flush writes out what w holds; a failure is the command's.
func flush(w *bufio.Writer) error {
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// applyDisk is `iosched udev` for one disk with its properties from
// the udev database. A disk without a policy is nothing to do; only a
// disk named on the command line says so.
func (e env) applyDisk(disk string, named, dryRun bool) error {
	props, err := e.udev(disk)
	if err != nil {
		return err
	}
	keys, get := policy.KeysOf(props), func(k string) string { return props[k] }
	if !policy.Asks(get, keys) {
		if named {
			return writeOut(e, disk+": no policy recorded by udev, nothing to do\n")
		}
		return nil
	}
	q := sysfs.Queue{FS: e.sys, Disk: disk}
	if !q.Has("scheduler") {
		return writeOut(e, disk+": no I/O scheduler, nothing to do\n")
	}
	return e.applyRecorded(e.disk(q), keys, get, dryRun)
}
