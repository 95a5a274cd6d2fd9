package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/iosched/iosched/helper/policy"
	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/sysfs"
	"github.com/iosched/iosched/helper/udevdb"
)

// errReported makes a command exit 1 after it has named each failure on
// stderr itself.
type errReported struct{ n int }

func (e errReported) Error() string { return fmt.Sprintf("%d disk(s) failed", e.n) }

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
		seen := map[string]bool{}
		for _, a := range pos {
			dev, err := e.resolver().Resolve(a)
			if err != nil {
				return inputError(err)
			}
			if !seen[dev.Disk] {
				seen[dev.Disk] = true
				disks = append(disks, dev.Disk)
			}
		}
	} else {
		var err error
		if disks, err = e.diskNames(); err != nil {
			return err
		}
	}
	// Two lines a disk: one write(2) for all, as status does, but never
	// holding a disk's lines back past its errors on stderr. Output that
	// cannot be written is a failure: it is the command's answer.
	out := bufio.NewWriter(e.stdout)
	e.stdout = out
	failed := 0
	for _, disk := range disks {
		err := e.applyRecorded(disk, named, *dryRun)
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
		return errReported{failed}
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

// applyRecorded is `iosched udev` for one disk with its properties from
// the udev database. A disk without a policy is nothing to do; only a
// disk named on the command line says so.
func (e env) applyRecorded(disk string, named, dryRun bool) error {
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
	return e.applyPolicy(e.disk(q), keys, get, dryRun)
}

// diskNames lists the disks under /sys/block, sorted.
func (e env) diskNames() ([]string, error) {
	dir := e.sys.Path("block")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list disks in %s: %w", dir, err)
	}
	names := make([]string, 0, len(ents))
	for _, ent := range ents {
		names = append(names, ent.Name())
	}
	sort.Strings(names)
	return names, nil
}

// policyHolds fills in whether the disk's queue is what its recorded
// policy asks for: the same dry pass `apply` makes first, so "holds" here
// means `apply` would write nothing. Drift lists what it would change.
func (e env) policyHolds(st *diskStatus, q sysfs.Queue, scheduler string, props map[string]string) {
	keys, get := policy.KeysOf(props), func(k string) string { return props[k] }
	if st.Active == "" || !policy.Asks(get, keys) {
		return // no scheduler to apply to, or nothing asked
	}
	// status has just read queue/scheduler: a second read would cost a
	// syscall round per disk and tell nothing new.
	d := e.disk(readQueue{q, "scheduler", scheduler})
	p, bad := policy.FromProperties(q.Disk, keys, get)
	plan := d.Check(p)
	r, refused := plan.Report, plan.Refused
	if r.Gone {
		st.Note = "went away"
		return
	}
	for _, l := range r.Lines {
		if l.Change {
			st.Drift = append(st.Drift, l.Text)
		}
	}
	for _, c := range r.Changes {
		st.changes = append(st.changes, c.Attr)
	}
	var notes []string
	for _, err := range slices.Concat(bad, refused, r.Errs) {
		notes = append(notes, err.Error())
	}
	st.Note = strings.Join(notes, "; ")
	holds := !r.Changed() && len(notes) == 0
	st.Holds = &holds
}

// recordedAttrs maps the attribute properties to attribute names, for
// `status --json`.
func recordedAttrs(props map[string]string) map[string]string {
	var m map[string]string
	for k, v := range props {
		if name, ok := queueattr.FromProperty(k); ok && name != queueattr.Scheduler {
			if m == nil {
				m = map[string]string{}
			}
			m[name] = v
		}
	}
	return m
}

// checkRows is `status --check`: like `tuned-adm verify`, exit 1 when
// any disk's recorded policy does not hold, one stderr line per disk.
func (e env) checkRows(rows []diskStatus) error {
	failed := 0
	for _, r := range rows {
		if r.noUdevDB {
			return fmt.Errorf("status --check: %w", udevdb.ErrUnavailable)
		}
		if r.Holds == nil || *r.Holds {
			continue
		}
		why := strings.Join(r.Drift, ", ")
		if r.Note != "" {
			why = strings.Join(append(r.Drift, r.Note), "; ")
		}
		if len(r.Writers) > 0 {
			why += "; another writer is configured: " + strings.Join(r.Writers, "; ")
		}
		fmt.Fprintf(e.stderr, "iosched: %s\n", clipQuoted(fmt.Sprintf("%s: policy does not hold: %s", r.Disk, why)))
		failed++
	}
	if failed > 0 {
		return errReported{failed}
	}
	return nil
}

// readQueue is a queue whose one attribute has been read already.
type readQueue struct {
	sysfs.Queue
	attr, value string
}

func (r readQueue) Read(attr string) (string, error) {
	if attr == r.attr {
		return r.value, nil
	}
	return r.Queue.Read(attr)
}
