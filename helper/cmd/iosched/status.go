package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/iosched/iosched/helper/policy"
	"github.com/iosched/iosched/helper/status"
	"github.com/iosched/iosched/helper/udevdb"
)

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
	rows, err := status.Source{Sys: e.sys, Udev: e.udev, Root: e.root, Disk: e.disk}.Rows()
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

func (e env) printStatus(rows []status.Row, format string) error {
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

// checkRows is `status --check`: like `tuned-adm verify`, exit 1 when
// any disk's recorded policy does not hold, one stderr line per disk.
func (e env) checkRows(rows []status.Row) error {
	failed := 0
	for _, r := range rows {
		if r.NoUdevDB {
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
		fmt.Fprintf(e.stderr, "iosched: %s\n", policy.ClipQuoted(fmt.Sprintf("%s: policy does not hold: %s", r.Disk, why)))
		failed++
	}
	if failed > 0 {
		return errReported{failed}
	}
	return nil
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

func wantedText(r status.Row) string {
	switch {
	case r.Wanted == nil && r.NoUdevDB:
		return "?"
	case r.Wanted == nil:
		return "-"
	case *r.Wanted == "":
		return "(opted out)"
	}
	return *r.Wanted
}
