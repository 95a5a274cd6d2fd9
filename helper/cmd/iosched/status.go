package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/iosched/iosched/helper/policy"
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
	changes []string // the attributes apply would write ("scheduler" too)
	// noUdevDB: this build cannot read the udev database, so an absent
	// Wanted means "unknown", not "no policy".
	noUdevDB bool
}

func cmdStatus(e env, args []string) error {
	fs := newFlagSet("status")
	asJSON := fs.Bool("json", false, "print a JSON array (--format=json)")
	format := fs.String("format", "table", "table, json or prometheus (node_exporter's textfile collector)")
	check := fs.Bool("check", false, "exit 1 when a disk's recorded policy does not hold, naming it on stderr")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("status takes no arguments")
	}
	if *asJSON {
		if *format != "table" && *format != "json" {
			return usagef("status: --json and --format=%s conflict", *format)
		}
		*format = "json"
	}
	if *format != "table" && *format != "json" && *format != "prometheus" {
		return usagef("status: unknown --format %q (want table, json or prometheus)", *format)
	}
	rows, err := e.statusRows()
	if err != nil {
		return err
	}
	if err := e.printStatus(rows, *format); err != nil {
		return err
	}
	if *check {
		return e.checkRows(rows)
	}
	return nil
}

func (e env) printStatus(rows []diskStatus, format string) error {
	// One write(2) for the whole table, not one per cell.
	out := bufio.NewWriter(e.stdout)
	switch format {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			return err
		}
		return out.Flush()
	case "prometheus":
		e.writePrometheus(out, rows)
		return out.Flush()
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DISK\tACTIVE\tOFFERED\tROTATIONAL\tWANTED\tFROM\tHOLDS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(r.Disk), cell(dash(r.Active)),
			cell(dash(strings.Join(r.Offered, ","))), yesNo(r.Rotational), cell(wantedText(r)), cell(dash(r.From)), yesNo(r.Holds))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		for _, w := range r.Writers {
			fmt.Fprintf(out, "%s: drifted; %s\n", cell(r.Disk), cell(w))
		}
	}
	return out.Flush()
}

func (e env) statusRows() ([]diskStatus, error) {
	names, err := e.diskNames()
	if err != nil {
		return nil, err
	}
	rows := make([]diskStatus, 0, len(names))
	for _, n := range names {
		rows = append(rows, e.diskStatus(n))
	}
	e.otherWriters(rows)
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
	s, err := q.Read("scheduler")
	if err == nil {
		if line, err = sched.Parse(s); err == nil {
			st.Active, st.Offered = line.Active, line.Offered
		} else {
			st.Note = err.Error()
		}
	}
	props, err := e.udev(disk)
	if err != nil {
		st.Note, st.noUdevDB = err.Error(), errors.Is(err, udevdb.ErrUnavailable)
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
	e.policyHolds(&st, q, s, props)
	return st
}

// cell shows a value in the table as it is when it is printable UTF-8,
// else Go-quoted: a value from a hostile udev database must not move
// the cursor, clear the screen or break the columns (tabs, escapes).
func cell(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
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
