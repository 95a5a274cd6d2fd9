package main

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/iosched/iosched/helper/writers"
)

// otherWriters names, on each row whose policy does not hold, the
// writers besides udev configured for that disk and for what drifted
// (package writers finds them under e.root): the likely cause of the
// drift. Their configuration is read only when some row drifted.
func (e env) otherWriters(rows []diskStatus) {
	if e.root == "" || !slices.ContainsFunc(rows, func(r diskStatus) bool { return len(r.changes) > 0 }) {
		return
	}
	// A file that cannot be read is audit's to report; the rest counts.
	found, _ := writers.Find(e.root)
	for i := range rows {
		r := &rows[i]
		for _, w := range found {
			if !slices.Contains(r.changes, w.Attr) || !configuredFor(w, r.Disk) {
				continue
			}
			if w.Kind == writers.Tuned && !strings.HasPrefix(w.Note, "the active profile") {
				continue // a profile tuned does not run writes nothing
			}
			what := fmt.Sprintf("%s (%s:%d) writes %s", w.Kind, w.File, w.Line, w.Attr)
			if w.Value != "" {
				what += fmt.Sprintf("=%q", w.Value)
			}
			r.Writers = append(r.Writers, what)
		}
	}
}

// configuredFor reports whether a writer's disk list names disk: empty
// means every disk; else names or globs separated by commas or spaces,
// "!" excluding (tuned's devices=, TLP's DISK_DEVICES, a tmpfiles path).
func configuredFor(w writers.Writer, disk string) bool {
	if w.Disk == "" {
		return true
	}
	named, excluded := false, false
	for _, p := range strings.FieldsFunc(w.Disk, func(r rune) bool { return r == ',' || r == ' ' }) {
		neg := strings.HasPrefix(p, "!")
		if ok, _ := path.Match(strings.TrimPrefix(p, "!"), disk); ok {
			if neg {
				excluded = true
			} else {
				named = true
			}
		} else if neg {
			named = true // "!sda" alone names every other disk
		}
	}
	return named && !excluded
}
