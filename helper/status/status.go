// Package status tells, for each disk, what it runs beside what udev
// recorded for it, whether that policy holds (the dry pass `iosched
// apply` makes first) and, where it does not, which other configured
// writer is the likely cause. The commands print its rows.
package status

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/iosched/iosched/helper/apply"
	"github.com/iosched/iosched/helper/policy"
	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/sched"
	"github.com/iosched/iosched/helper/sysfs"
	"github.com/iosched/iosched/helper/udevdb"
	"github.com/iosched/iosched/helper/writers"
)

// Row is one disk of `iosched status`.
type Row struct {
	Disk       string   `json:"disk"`
	Active     string   `json:"active,omitempty"`  // empty: no I/O scheduler
	Offered    []string `json:"offered,omitempty"` // in the kernel's order
	Rotational *bool    `json:"rotational,omitempty"`
	Wanted     *string  `json:"wanted,omitempty"` // nil: udev recorded no policy
	// From is where Wanted came from: "class", "pin ID_WWN=...",
	// "command line elevator=none", "rule" (policy.Wanted).
	From  string `json:"from,omitempty"`
	Holds *bool  `json:"holds,omitempty"` // nil: nothing wanted, or unknown
	Note  string `json:"note,omitempty"`

	Attrs map[string]string `json:"attrs,omitempty"` // recorded IOSCHED_ATTR_*/IOSCHED_TUNE_*, by attribute
	Drift []string          `json:"drift,omitempty"` // what apply would change
	// Writers are the other writers configured for the disk and for
	// what drifted: the likely cause (otherWriters).
	Writers []string `json:"writers,omitempty"`
	Changes []string `json:"-"` // the attributes apply would write ("scheduler" too)
	// NoUdevDB: this build cannot read the udev database, so an absent
	// Wanted means "unknown", not "no policy".
	NoUdevDB bool `json:"-"`
}

// Source is what the rows are read from.
type Source struct {
	Sys  sysfs.FS
	Udev udevdb.Lookup
	// Root is the filesystem root other writers' configuration is read
	// under (package writers); "": none is.
	Root string
	// Disk makes the policy.Disk of a queue, as apply would.
	Disk func(apply.Queue) policy.Disk
}

// Rows is one row a disk, sorted by name.
func (s Source) Rows() ([]Row, error) {
	names, err := s.Sys.Disks()
	if err != nil {
		return nil, err
	}
	rows := make([]Row, 0, len(names))
	for _, n := range names {
		rows = append(rows, s.row(n))
	}
	s.otherWriters(rows)
	return rows, nil
}

func (s Source) row(disk string) Row {
	q := sysfs.Queue{FS: s.Sys, Disk: disk}
	st := Row{Disk: disk}
	if v, err := q.Read("rotational"); err == nil {
		rot := v == "1"
		st.Rotational = &rot
	}
	line, err := q.Read("scheduler")
	if err == nil {
		if l, err := sched.Parse(line); err == nil {
			st.Active, st.Offered = l.Active, l.Offered
		} else {
			st.Note = err.Error()
		}
	}
	props, err := s.Udev(disk)
	if err != nil {
		st.Note, st.NoUdevDB = err.Error(), errors.Is(err, udevdb.ErrUnavailable)
		return st
	}
	// The kernel command line's entry for the disk, when it has one (a
	// malformed one shows in the note).
	w, _ := policy.WantedFor(disk, func(k string) string { return props[k] })
	_, recorded := props[queueattr.Property(queueattr.Scheduler)]
	if recorded || w.Source != "" {
		st.Wanted = &w.List
		st.From = strings.TrimSpace(w.Source + " " + w.Param)
	}
	st.Attrs = recordedAttrs(props)
	s.holds(&st, q, line, props)
	return st
}

// holds fills in whether the disk's queue is what its recorded policy
// asks for: the same dry pass `apply` makes first, so "holds" here means
// `apply` would write nothing. Drift lists what it would change.
func (s Source) holds(st *Row, q sysfs.Queue, scheduler string, props map[string]string) {
	keys, get := policy.KeysOf(props), func(k string) string { return props[k] }
	if st.Active == "" || !policy.Asks(get, keys) {
		return // no scheduler to apply to, or nothing asked
	}
	// The row has just read queue/scheduler: a second read would cost a
	// syscall round per disk and tell nothing new.
	d := s.Disk(readQueue{q, queueattr.Scheduler, scheduler})
	p, bad := policy.FromProperties(q.Disk, keys, get)
	plan := d.Check(p)
	r := plan.Report
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
		st.Changes = append(st.Changes, c.Attr)
	}
	var notes []string
	for _, err := range slices.Concat(bad, plan.Refused, r.Errs) {
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

// otherWriters names, on each row whose policy does not hold, the
// writers besides udev configured for that disk and for what drifted:
// the likely cause of the drift. Their configuration is read only when
// some row drifted.
func (s Source) otherWriters(rows []Row) {
	if s.Root == "" || !slices.ContainsFunc(rows, func(r Row) bool { return len(r.Changes) > 0 }) {
		return
	}
	// A file that cannot be read is audit's to report; the rest counts.
	found, _ := writers.Find(s.Root)
	for i := range rows {
		r := &rows[i]
		for _, w := range found {
			if !slices.Contains(r.Changes, w.Attr) || !w.ConfiguredFor(r.Disk) {
				continue
			}
			if w.Kind == writers.Tuned && w.Included {
				continue // only the active profile's own options are named
			}
			what := fmt.Sprintf("%s (%s:%d) writes %s", w.Kind, w.File, w.Line, w.Attr)
			if w.Value != "" {
				what += fmt.Sprintf("=%q", w.Value)
			}
			r.Writers = append(r.Writers, what)
		}
	}
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
