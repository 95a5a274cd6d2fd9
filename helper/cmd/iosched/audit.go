package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/iosched/iosched/helper/rulesaudit"
	"github.com/iosched/iosched/helper/writers"
)

// exitPartly is audit --fix's status when it converted some files and
// refused others, which it left as they were.
const exitPartly = 3

// cmdAudit prints what package rulesaudit found in the rules and, with
// no path, what package writers finds besides: exit 0 when there is
// nothing, 1 when there is (so that a distribution can run it in CI), 2
// when a rules file or directory could not be read (reported, skipped,
// the rest audited, as udevd skips it too). --fix converts the writes
// in place, in files of the same names in the first rules directory,
// and exits 2 as well when a named file was skipped or is not one udevd
// reads; --undo puts back what --fix changed.
func cmdAudit(e env, args []string) error {
	fs := newFlagSet("audit")
	fix := fs.Bool("fix", false, "write the converted rules to the first rules directory")
	dry := fs.Bool("dry-run", false, "with --fix: print the files it would write as a unified diff")
	undo := fs.Bool("undo", false, "put back what --fix changed, unless changed since")
	renamed := fs.Bool("renamed-schedulers", false, `with --fix: convert "noop" and "cfq", whose writes fail today, to "none" and "bfq" rather than drop them`)
	forget := fs.Bool("forget", false, "with --undo: drop the journal's record of each named file, keeping the file as it is")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *forget && (!*undo || len(pos) == 0):
		return usagef("audit --forget goes with --undo and one or more files")
	case *undo && (*fix || *dry || len(pos) > 0 && !*forget):
		return usagef("audit --undo takes no other flag or argument but --forget FILE...")
	case *dry && !*fix:
		return usagef("audit --dry-run goes with --fix")
	case *renamed && !*fix:
		return usagef("audit --renamed-schedulers goes with --fix")
	case (*fix || *undo) && len(e.rulesDirs) == 0:
		return usagef("audit: no rules directory to write to")
	}
	out := bufio.NewWriter(e.stdout)
	switch {
	case *forget:
		err = auditForget(e, out, pos)
	case *undo:
		err = auditUndo(e, out)
	case *fix:
		err = auditFix(e, out, rulesaudit.Audit(pos, e.rulesDirs), *dry, *renamed)
	default:
		err = auditRun(e, out, pos)
	}
	if ferr := out.Flush(); ferr != nil {
		return fmt.Errorf("audit: write output: %w", ferr)
	}
	return err
}

// auditRun prints the findings of the rules of paths (the system's
// rules directories when there are none) and, for the system, the other
// writers and the converted copies whose original changed since --fix.
func auditRun(e env, out io.Writer, paths []string) error {
	a := rulesaudit.Audit(paths, e.rulesDirs)
	skipped := a.Skipped
	e.printErrs(skipped...)
	for i, f := range a.Found {
		next := i + 1
		last := next == len(a.Found) || a.Found[next].File != f.File || a.Found[next].Line != f.Line || a.Found[next].ViaRUN
		fmt.Fprintln(out, f.Text(last || f.ViaRUN))
	}
	blind := 0 // writes that do not compare first
	if len(paths) == 0 && e.root != "" {
		ws, err := writers.Find(e.root)
		if err != nil {
			skipped = append(skipped, err)
			e.printErrs(err)
		}
		for _, w := range ws {
			fmt.Fprintln(out, w)
			if w.Conditional == "" {
				blind++
			}
		}
	}
	var stale []string
	if len(paths) == 0 && len(e.rulesDirs) > 0 {
		var err error
		if stale, err = rulesaudit.Stale(e.rulesDirs[0]); err != nil {
			skipped = append(skipped, err)
			e.printErrs(err)
		}
		for _, s := range stale {
			fmt.Fprintln(out, s)
		}
	}
	conflicts := 0
	for _, f := range a.AddOnly {
		if rulesaudit.Conflicts(f, a.Policy) {
			conflicts++
		}
		fmt.Fprintln(out, rulesaudit.AddOnlyText(f, a.Policy))
	}
	where := humanList(a.Read)
	if where == "" {
		where = "nowhere: no rules directory exists"
	}
	if len(a.Found) > 0 {
		fmt.Fprintf(out, "%d write(s) of freezing queue attributes on change events in %d file(s) read from %s\n",
			len(a.Found), len(a.Files), where)
	} else {
		fmt.Fprintf(out, "no rule writes a freezing queue attribute on change events (%d file(s) read from %s)\n",
			len(a.Files), where)
	}
	if blind > 0 {
		fmt.Fprintf(out, "%d write(s) of queue attributes at boot outside udev's rules, none comparing first\n", blind)
	}
	if conflicts > 0 {
		fmt.Fprintf(out, "%d add-only scheduler write(s) fight iosched's policy at every boot\n", conflicts)
	}
	if len(stale) > 0 {
		fmt.Fprintf(out, "%d converted cop(y/ies) of a file changed since --fix\n", len(stale))
	}
	switch {
	case len(skipped) > 0:
		return reported(exitUsage)
	case len(a.Found)+conflicts+blind+len(stale) > 0:
		return reported(exitFailure)
	}
	return nil
}

// auditFix writes (or with dry, shows) the files that convert the rules
// a read that udevd reads, in place; the others are reported and exit 2.
func auditFix(e env, out io.Writer, a rulesaudit.Report, dry, renamed bool) error {
	fixable, notRead := a.Fixable()
	skipped := append(a.Skipped, notRead...)
	e.printErrs(skipped...)
	plan, refused, err := a.PlanFixes(fixable, string(e.sys), renamed, dry)
	if err == nil && len(plan) == 0 {
		err, refused = refused, nil // every file refused: stated once
	}
	if err := e.fixFailed(refused, err); err != nil {
		return err
	}
	if len(plan) == 0 {
		fmt.Fprintln(out, "nothing to fix: no rule writes a freezing queue attribute on change events")
		return fixStatus(skipped)
	}
	for _, c := range plan {
		for _, n := range c.Notes {
			fmt.Fprintf(out, "%s\n", n)
		}
	}
	did := "would convert"
	if dry {
		for _, c := range plan {
			fmt.Fprint(out, rulesaudit.Diff(c.Source, c.Path, string(c.Base), string(c.Data)))
		}
	} else {
		if err := e.fixFailed(refused, rulesaudit.ApplyFix(a.Dirs[0], plan)); err != nil {
			return err
		}
		did = "converted"
		for _, c := range plan {
			if c.Path == c.Source {
				fmt.Fprintf(out, "converted %s in place\n", c.Path)
			} else {
				fmt.Fprintf(out, "wrote %s: %s converted, in its place\n", c.Path, c.Source)
			}
		}
		fmt.Fprintf(out, "recorded in %s; `iosched audit --undo` puts back what was there\n", filepath.Join(a.Dirs[0], rulesaudit.ManifestName))
		fmt.Fprintln(out, "apply with: udevadm control --reload")
	}
	if m := rulesaudit.RefusedFiles(refused); m > 0 {
		e.reportErr(refused)
		fmt.Fprintf(e.stderr, "iosched: audit --fix: partly converted: %s %d file(s); %d file(s) refused above, left as they were\n", did, len(plan), m)
		return reported(exitPartly)
	}
	return fixStatus(skipped)
}

// fixFailed is what stops --fix as a whole: refusals (exit 2, nothing
// written; refused are those that would have left only their files as
// they are) or a failure.
func (e env) fixFailed(refused, err error) error {
	if rulesaudit.RefusedFiles(err) > 0 {
		e.reportErr(errors.Join(refused, err))
		fmt.Fprintln(e.stderr, "iosched: audit --fix: nothing written")
		return reported(exitUsage)
	}
	if err != nil {
		return fmt.Errorf("audit --fix: %w", err)
	}
	return nil
}

// fixStatus is exit 2 when --fix skipped a file it was asked to read.
func fixStatus(skipped []error) error {
	if len(skipped) > 0 {
		return reported(exitUsage)
	}
	return nil
}

// auditForget drops the journal's record of each file, leaving it as
// it is: the way out for a converted file the user edited since.
func auditForget(e env, out io.Writer, files []string) error {
	for _, f := range files {
		if err := rulesaudit.Forget(e.rulesDirs[0], f); err != nil {
			return fmt.Errorf("audit --undo --forget: %w", err)
		}
		fmt.Fprintf(out, "forgot %s: kept as it is; --undo no longer puts back what was there before --fix\n", f)
	}
	return nil
}

// auditUndo puts back what --fix changed.
func auditUndo(e env, out io.Writer) error {
	res, err := rulesaudit.Undo(e.rulesDirs[0])
	for _, p := range res.Removed {
		fmt.Fprintf(out, "removed %s\n", p)
	}
	for _, p := range res.Restored {
		fmt.Fprintf(out, "restored %s\n", p)
	}
	for _, p := range res.Gone {
		fmt.Fprintf(out, "%s: already gone\n", p)
	}
	for _, k := range res.Kept {
		fmt.Fprintf(e.stderr, "iosched: %s\n", k)
	}
	switch {
	case err != nil:
		return err
	case len(res.Removed)+len(res.Restored)+len(res.Gone)+len(res.Kept) == 0:
		fmt.Fprintln(out, "nothing to undo")
		return nil
	}
	if len(res.Removed)+len(res.Restored) > 0 {
		fmt.Fprintln(out, "apply with: udevadm control --reload")
	}
	if len(res.Kept) > 0 {
		return reported(exitFailure)
	}
	return nil
}

// printErrs reports each error on its own stderr line, as it is.
func (e env) printErrs(errs ...error) {
	for _, err := range errs {
		fmt.Fprintf(e.stderr, "iosched: %v\n", err)
	}
}

// humanList joins names as a person writes a list: "a", "a and b",
// "a, b and c".
func humanList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
