package main

import (
	"fmt"
	"strings"

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
	src := status.Source{Sys: e.sys, Udev: e.udev, Root: e.root, Disk: e.disk}
	rows, err := src.Rows()
	if err != nil {
		return err
	}
	if err := src.Write(e.stdout, rows, *format); err != nil {
		return err
	}
	if *check {
		return e.checkRows(rows)
	}
	return nil
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
		return reported(exitFailure)
	}
	return nil
}
