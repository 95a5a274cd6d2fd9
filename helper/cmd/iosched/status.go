package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/iosched/iosched/helper/apply"
	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/sched"
	"github.com/iosched/iosched/helper/sysfs"
	"github.com/iosched/iosched/helper/udevdb"
)

// diskStatus is one row of `iosched status`.
type diskStatus struct {
	Disk       string   `json:"disk"`
	Active     string   `json:"active,omitempty"`  // empty: no I/O scheduler
	Offered    []string `json:"offered,omitempty"` // in the kernel's order
	Rotational *bool    `json:"rotational,omitempty"`
	Wanted     *string  `json:"wanted,omitempty"` // nil: udev recorded no policy
	Holds      *bool    `json:"holds,omitempty"`  // nil: nothing wanted, or unknown
	Note       string   `json:"note,omitempty"`
	// noUdevDB: this build cannot read the udev database, so an absent
	// Wanted means "unknown", not "no policy".
	noUdevDB bool
}

func cmdStatus(e env, args []string) error {
	fs := newFlagSet("status")
	asJSON := fs.Bool("json", false, "print a JSON array")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("status takes no arguments")
	}
	rows, err := e.statusRows()
	if err != nil {
		return err
	}
	// One write(2) for the whole table, not one per cell.
	out := bufio.NewWriter(e.stdout)
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			return err
		}
		return out.Flush()
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DISK\tACTIVE\tOFFERED\tROTATIONAL\tWANTED\tHOLDS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Disk, dash(r.Active),
			dash(strings.Join(r.Offered, ",")), yesNo(r.Rotational), wantedText(r), yesNo(r.Holds))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return out.Flush()
}

func (e env) statusRows() ([]diskStatus, error) {
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
	rows := make([]diskStatus, 0, len(names))
	for _, n := range names {
		rows = append(rows, e.diskStatus(n))
	}
	return rows, nil
}

func (e env) diskStatus(disk string) diskStatus {
	q := sysfs.Queue{FS: e.sys, Disk: disk}
	st := diskStatus{Disk: disk}
	if v, err := q.Read("rotational"); err == nil {
		rot := v == "1"
		st.Rotational = &rot
	}
	var line sched.Line
	if s, err := q.Read("scheduler"); err == nil {
		if line, err = sched.Parse(s); err == nil {
			st.Active, st.Offered = line.Active, line.Offered
		} else {
			st.Note = err.Error()
		}
	}
	v, ok, err := e.udev(disk, queueattr.Property(queueattr.Scheduler))
	switch {
	case err != nil:
		st.Note, st.noUdevDB = err.Error(), errors.Is(err, udevdb.ErrUnavailable)
		return st
	case !ok:
		return st
	}
	st.Wanted = &v
	wanted, err := sched.ParseList(v)
	if v == "" || st.Active == "" || err != nil {
		if err != nil && v != "" {
			st.Note = err.Error()
		}
		return st
	}
	// A dry run answers "would anything be written?" with the same
	// decision `iosched set` makes.
	res, err := e.disk(q, true).SchedulerFrom(line, wanted)
	holds := err == nil && !res.Changed
	if err != nil && !errors.Is(err, apply.ErrUnavailable) {
		st.Note = err.Error()
		return st
	}
	st.Holds = &holds
	return st
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b *bool) string {
	switch {
	case b == nil:
		return "-"
	case *b:
		return "yes"
	}
	return "no"
}

func wantedText(r diskStatus) string {
	switch {
	case r.Wanted == nil && r.noUdevDB:
		return "?"
	case r.Wanted == nil:
		return "-"
	case *r.Wanted == "":
		return "(opted out)"
	}
	return *r.Wanted
}
