package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/iosched/iosched/helper/rulesaudit"
	"github.com/iosched/iosched/helper/writers"
)

// errFound ends audit with a status and no further message: what it has
// to say is printed already.
type errFound struct {
	n      int // findings
	status int // 0: exitFailure
}

func (e errFound) Error() string {
	return fmt.Sprintf("%d rule(s) freeze queues on change events", e.n)
}

func (e errFound) exit() int {
	if e.status != 0 {
		return e.status
	}
	return exitFailure
}

// cmdAudit reports rules that write a freezing queue attribute with
// ATTR{} on change events, add-only scheduler writes beside iosched's
// policy and, auditing the system, the other writers package writers
// finds: exit 0 when there is none, 1 when it finds any (so that a distribution can run it in CI), 2 when it could not read
// a rules file or directory (reported, skipped, the rest audited, as
// udevd skips it too). --fix converts those writes into properties in
// place, in files of the same names in the first rules directory
// (/etc/udev/rules.d), and exits 2 as well when a named file was
// skipped or is not one udevd reads; --undo puts back what --fix
// changed.
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
	default:
		err = auditRun(e, out, pos, fixOptions{fix: *fix, dry: *dry, renamed: *renamed})
	}
	if ferr := out.Flush(); ferr != nil {
		return fmt.Errorf("audit: write output: %w", ferr)
	}
	return err
}

// auditRun audits the rules of paths (the system's rules directories
// when there are none) and, with fix, converts them: only files udevd
// reads, as it resolves them, are ever fixed.
func auditRun(e env, out io.Writer, paths []string, opt fixOptions) error {
	var files, read []string
	var skipped []error
	system := rulesaudit.List(e.rulesDirs)
	if len(paths) == 0 {
		files, skipped = system.Files, system.Skipped
		for _, d := range e.rulesDirs {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				read = append(read, d)
			}
		}
	}
	for _, p := range paths {
		read = append(read, p)
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			skipped = append(skipped, fmt.Errorf("audit: %w", err))
		case fi.IsDir():
			l := rulesaudit.List([]string{p})
			files, skipped = append(files, l.Files...), append(skipped, l.Skipped...)
		case !fi.Mode().IsRegular():
			skipped = append(skipped, fmt.Errorf("audit %s: not a regular file", p))
		default:
			files = append(files, p)
		}
	}
	var found, addOnly []rulesaudit.Finding
	var readable []string
	policy := false
	for _, f := range files {
		fd, err := rulesaudit.File(f)
		found = append(found, fd...) // udev 252's writes, with a line too long
		if err != nil {
			skipped = append(skipped, err)
			continue
		}
		readable = append(readable, f)
		ao, _ := rulesaudit.AddOnly(f)
		addOnly = append(addOnly, ao...)
		policy = policy || filepath.Base(f) == rulesaudit.PolicyRules
	}
	if opt.fix {
		fixable, notRead := udevdReads(readable, system.Files, e.rulesDirs)
		skipped = append(skipped, notRead...)
		for _, err := range skipped {
			fmt.Fprintf(e.stderr, "iosched: %v\n", err)
		}
		err := auditFix(e, out, system.Files, fixable, opt)
		if err == nil && len(skipped) > 0 {
			return errFound{status: exitUsage}
		}
		return err
	}
	for _, err := range skipped {
		fmt.Fprintf(e.stderr, "iosched: %v\n", err)
	}
	for i, f := range found {
		last := i+1 == len(found) || found[i+1].File != f.File || found[i+1].Line != f.Line || found[i+1].ViaRUN
		fmt.Fprintln(out, f.Text(last || f.ViaRUN))
	}
	var others []writers.Writer
	if len(paths) == 0 && e.root != "" {
		ws, err := writers.Find(e.root)
		others = ws
		if err != nil {
			skipped = append(skipped, err)
			fmt.Fprintf(e.stderr, "iosched: %v\n", err)
		}
	}
	blind := 0 // writes that do not compare first
	for _, w := range others {
		fmt.Fprintln(out, w)
		if w.Conditional == "" {
			blind++
		}
	}
	var stale []string
	if len(paths) == 0 && len(e.rulesDirs) > 0 {
		var err error
		stale, err = rulesaudit.Stale(e.rulesDirs[0])
		if err != nil {
			skipped = append(skipped, err)
			fmt.Fprintf(e.stderr, "iosched: %v\n", err)
		}
		for _, s := range stale {
			fmt.Fprintln(out, s)
		}
	}
	conflicts := 0
	for _, f := range addOnly {
		t := rulesaudit.AddOnlyText(f, policy)
		if strings.Contains(t, "\n") {
			conflicts++
		}
		fmt.Fprintln(out, t)
	}
	where := humanList(read)
	if where == "" {
		where = "nowhere: no rules directory exists"
	}
	if len(found) > 0 {
		fmt.Fprintf(out, "%d write(s) of freezing queue attributes on change events in %d file(s) read from %s\n",
			len(found), len(readable), where)
	} else {
		fmt.Fprintf(out, "no rule writes a freezing queue attribute on change events (%d file(s) read from %s)\n",
			len(readable), where)
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
		return errFound{n: len(found), status: exitUsage}
	case len(found)+conflicts+blind+len(stale) > 0:
		return errFound{n: len(found) + conflicts + blind + len(stale)}
	}
	return nil
}

// fixOptions are audit's --fix, --dry-run and --renamed-schedulers.
type fixOptions struct{ fix, dry, renamed bool }

// udevdReads splits files into those udevd reads (one of system, the
// files List found in the rules directories, by absolute path) and an
// error for each other one: audited, never fixed.
func udevdReads(files, system, dirs []string) ([]string, []error) {
	reads := map[string]bool{}
	byName := map[string]string{}
	for _, f := range system {
		a, _ := filepath.Abs(f)
		reads[a] = true
		byName[filepath.Base(f)] = f
	}
	var fixable []string
	var not []error
	for _, f := range files {
		a, err := filepath.Abs(f)
		if err == nil && reads[a] {
			fixable = append(fixable, a)
			continue
		}
		why := "it is not in udev's rules directories (" + strings.Join(dirs, ", ") + ")"
		if other, ok := byName[filepath.Base(f)]; ok {
			why = "udevd reads " + other + " in its place"
		} else if inDirs(f, dirs) {
			why = "udevd does not read it: a file of the same name in an earlier directory masks it"
		}
		not = append(not, fmt.Errorf("%s: audited, not fixed: %s", f, why))
	}
	return fixable, not
}

// inDirs reports whether f is a file of one of dirs.
func inDirs(f string, dirs []string) bool {
	for _, d := range dirs {
		if filepath.Clean(filepath.Dir(f)) == filepath.Clean(d) {
			return true
		}
	}
	return false
}

// auditFix writes (or with dry, shows) the files that convert the rules
// of fixable, in place; system is every file udevd reads, in its order.
func auditFix(e env, out io.Writer, system, fixable []string, opt fixOptions) error {
	dry := opt.dry
	target := e.rulesDirs[0]
	abs := make([]string, len(system))
	for i, f := range system {
		a, err := filepath.Abs(f)
		if err != nil {
			return fmt.Errorf("audit --fix: %w", err)
		}
		abs[i] = a
	}
	// A named file udevd reads that is not among the system's (a
	// directory given twice) is read in its own place.
	plan, err := rulesaudit.PlanFix(rulesaudit.FixInput{Read: abs, Fix: fixable, Target: target, Sys: string(e.sys), RenamedSchedulers: opt.renamed})
	var notConverted error // the refusals: the files they name stay as they are
	if refusedFiles(err) > 0 {
		notConverted, err = err, nil
	}
	if err == nil && dry {
		// What ApplyFix checks first, so that the dry run exits as
		// --fix would.
		err = rulesaudit.CheckFix(target, plan)
	}
	if err == nil && len(plan) == 0 {
		err = notConverted
	}
	if refusedFiles(err) > 0 {
		printRefused(e, errors.Join(notConverted, err))
		fmt.Fprintln(e.stderr, "iosched: audit --fix: nothing written")
		return errFound{status: exitUsage}
	}
	if err != nil {
		return fmt.Errorf("audit --fix: %w", err)
	}
	if len(plan) == 0 {
		fmt.Fprintln(out, "nothing to fix: no rule writes a freezing queue attribute on change events")
		return nil
	}
	for _, c := range plan {
		for _, n := range c.Notes {
			fmt.Fprintf(out, "%s\n", n)
		}
	}
	if dry {
		for _, c := range plan {
			fmt.Fprint(out, rulesaudit.Diff(c.Source, c.Path, string(c.Base), string(c.Data)))
		}
		return partly(e, notConverted, len(plan), "would convert")
	}
	if err := rulesaudit.ApplyFix(target, plan); err != nil {
		if refusedFiles(err) > 0 {
			printRefused(e, errors.Join(notConverted, err))
			fmt.Fprintln(e.stderr, "iosched: audit --fix: nothing written")
			return errFound{status: exitUsage}
		}
		return fmt.Errorf("audit --fix: %w", err)
	}
	for _, c := range plan {
		if c.Path == c.Source {
			fmt.Fprintf(out, "converted %s in place\n", c.Path)
		} else {
			fmt.Fprintf(out, "wrote %s: %s converted, in its place\n", c.Path, c.Source)
		}
	}
	fmt.Fprintf(out, "recorded in %s; `iosched audit --undo` puts back what was there\n", filepath.Join(target, rulesaudit.ManifestName))
	fmt.Fprintln(out, "apply with: udevadm control --reload")
	return partly(e, notConverted, len(plan), "converted")
}

// exitPartly is audit --fix's status when it converted some files and
// refused others, which it left as they were.
const exitPartly = 3

// partly reports the files refused beside n converted ones: exit
// status exitPartly when there are any.
func partly(e env, notConverted error, n int, did string) error {
	m := refusedFiles(notConverted)
	if m == 0 {
		return nil
	}
	printRefused(e, notConverted)
	fmt.Fprintf(e.stderr, "iosched: audit --fix: partly converted: %s %d file(s); %d file(s) refused above, left as they were\n", did, n, m)
	return errFound{status: exitPartly}
}

// refusedFiles counts the files err's refusals name.
func refusedFiles(err error) int {
	files := map[string]bool{}
	var walk func(error)
	walk = func(err error) {
		var r rulesaudit.Refusal
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
		} else if errors.As(err, &r) {
			files[r.File] = true
		}
	}
	if err != nil {
		walk(err)
	}
	return len(files)
}

// printRefused prints err's refusals, one a line, each quoted value
// clipped.
func printRefused(e env, err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(e.stderr, "iosched: %s\n", clipQuoted(line))
	}
}

// auditForget drops the journal's record of each file, leaving it as
// it is: the way out for a converted file the user edited since.
func auditForget(e env, out io.Writer, files []string) error {
	target := e.rulesDirs[0]
	for _, f := range files {
		if err := rulesaudit.Forget(target, f); err != nil {
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
	if err != nil {
		return err
	}
	if len(res.Removed)+len(res.Restored)+len(res.Gone)+len(res.Kept) == 0 {
		fmt.Fprintln(out, "nothing to undo")
		return nil
	}
	if len(res.Removed)+len(res.Restored) > 0 {
		fmt.Fprintln(out, "apply with: udevadm control --reload")
	}
	if len(res.Kept) > 0 {
		return errFound{}
	}
	return nil
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
