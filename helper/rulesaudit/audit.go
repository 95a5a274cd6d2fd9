package rulesaudit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/iosched/iosched/helper/queueattr"
)

// Report is what auditing rules files found.
type Report struct {
	Dirs    []string  // udev's rules directories, by precedence
	System  []string  // the files udevd reads from Dirs, in its order (List)
	Read    []string  // what was read, as named: the paths, else the Dirs that exist
	Files   []string  // the files read whole
	Found   []Finding // freezing writes on change events
	AddOnly []Finding // writes on add events only
	Policy  bool      // PolicyRules is among Files
	Skipped []error   // what udevd would not read either: reported, the rest audited
}

// Audit reads the rules files and directories of paths or, when there
// are none, the files udevd reads from dirs, udev's rules directories
// by precedence.
func Audit(paths, dirs []string) Report {
	system := List(dirs)
	r := Report{Dirs: dirs, System: system.Files}
	var files []string
	if len(paths) == 0 {
		files, r.Skipped = system.Files, system.Skipped
		for _, d := range dirs {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				r.Read = append(r.Read, d)
			}
		}
	}
	for _, p := range paths {
		r.Read = append(r.Read, p)
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			r.Skipped = append(r.Skipped, fmt.Errorf("audit: %w", err))
		case fi.IsDir():
			l := List([]string{p})
			files, r.Skipped = append(files, l.Files...), append(r.Skipped, l.Skipped...)
		case !fi.Mode().IsRegular():
			r.Skipped = append(r.Skipped, fmt.Errorf("audit %s: not a regular file", p))
		default:
			files = append(files, p)
		}
	}
	for _, f := range files {
		fd, err := File(f)
		r.Found = append(r.Found, fd...) // udev 252's writes, with a line too long
		if err != nil {
			r.Skipped = append(r.Skipped, err)
			continue
		}
		r.Files = append(r.Files, f)
		ao, _ := AddOnly(f)
		r.AddOnly = append(r.AddOnly, ao...)
		r.Policy = r.Policy || filepath.Base(f) == PolicyRules
	}
	return r
}

// Conflicts reports whether add-only write f fights iosched's policy:
// a scheduler write where policy, PolicyRules being read, sets one too.
func Conflicts(f Finding, policy bool) bool {
	return policy && f.Attr == queueattr.Scheduler
}

// Fixable splits the files read into those udevd reads (one of System,
// by absolute path), which --fix may convert, and an error for each
// other one: audited, never fixed.
func (r Report) Fixable() ([]string, []error) {
	reads := map[string]bool{}
	byName := map[string]string{}
	for _, f := range r.System {
		a, _ := filepath.Abs(f)
		reads[a] = true
		byName[filepath.Base(f)] = f
	}
	var fixable []string
	var not []error
	for _, f := range r.Files {
		a, err := filepath.Abs(f)
		if err == nil && reads[a] {
			fixable = append(fixable, a)
			continue
		}
		why := "it is not in udev's rules directories (" + strings.Join(r.Dirs, ", ") + ")"
		if other, ok := byName[filepath.Base(f)]; ok {
			why = "udevd reads " + other + " in its place"
		} else if inDirs(f, r.Dirs) {
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

// PlanFixes plans the conversion of fixable (Fixable) into the first
// rules directory, sys being the sysfs root (FixInput). It returns the
// plan, the refusals of the files it leaves as they are while it
// converts the others, and err: a failure, or refusals that stop every
// file (RefusedFiles). With dry it checks first what ApplyFix would, so
// that a dry run fails as the fix would.
func (r Report) PlanFixes(fixable []string, sys string, renamed, dry bool) (plan []Change, refused, err error) {
	abs := make([]string, len(r.System))
	for i, f := range r.System {
		if abs[i], err = filepath.Abs(f); err != nil {
			return nil, nil, err
		}
	}
	target := r.Dirs[0]
	// A named file udevd reads that is not among the system's (a
	// directory given twice) is read in its own place.
	plan, err = PlanFix(FixInput{Read: abs, Fix: fixable, Target: target, Sys: sys, RenamedSchedulers: renamed})
	if RefusedFiles(err) > 0 {
		refused, err = err, nil
	}
	if err == nil && dry {
		err = CheckFix(target, plan)
	}
	return plan, refused, err
}

// RefusedFiles counts the files err's refusals name.
func RefusedFiles(err error) int {
	files := map[string]bool{}
	var walk func(error)
	walk = func(err error) {
		var r Refusal
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
