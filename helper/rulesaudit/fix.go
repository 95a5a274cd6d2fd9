package rulesaudit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/sched"
)

// MigratedPrefix starts the name of the file that takes a rules file's
// converted writes: "61-iosched-migrated-" sorts after PolicyRules and
// before RunRules in udevd's order (by file name across directories), so
// the properties it sets override the policy and reach the run rule.
const MigratedPrefix = "61-iosched-migrated-"

// ManifestName is the file, in the target directory, that records every
// file Fix wrote; udevd reads only *.rules, and no hidden name.
const ManifestName = ".iosched-fix.json"

// Refusal is a rule that Fix cannot convert faithfully.
type Refusal struct {
	File string
	Line int // 0: the file as a whole
	Why  string
}

func (r Refusal) Error() string {
	if r.Line == 0 {
		return fmt.Sprintf("%s: not converted: %s", r.File, r.Why)
	}
	return fmt.Sprintf("%s:%d: not converted: %s", r.File, r.Line, r.Why)
}

// Change is one file Fix writes in the target directory.
type Change struct {
	Path   string // in the target directory
	Source string // the rules file it replaces
	Data   string // the new content; unused for a mask
	Mask   bool   // a link to /dev/null: the source has nothing left
	Base   string // what the diff compares Data with: the source's content for an override, "" for a new file
	// InPlace: Path is the source itself, a file of target: Undo puts
	// Base back rather than removing it.
	InPlace bool
}

// PlanFix works out the files that move the freezing writes of sources
// (rules files as List returns them, in udevd's order) into properties,
// written in target (/etc/udev/rules.d): for each source with findings,
// a file of the same name in target that overrides it, without those
// writes (a link to /dev/null when nothing else is left), and
// MigratedPrefix+NAME with the converted rules and the GOTO and LABEL
// lines they depend on. It refuses, and plans nothing, if any rule
// cannot be converted faithfully.
func PlanFix(sources []string, target string) ([]Change, error) {
	var plan []Change
	var refused []error
	for _, src := range sources {
		c, err := planFile(src, target)
		var r Refusal
		switch {
		case errors.As(err, &r):
			refused = append(refused, err)
		case err != nil:
			return nil, err
		}
		plan = append(plan, c...)
	}
	if len(refused) > 0 {
		return nil, errors.Join(refused...)
	}
	return plan, nil
}

// planFile plans one source: it converts the rules audited as writes on
// change events.
func planFile(src, target string) ([]Change, error) {
	rules, err := readFile(src)
	if err != nil {
		return nil, err
	}
	found := audit(src, rules)
	if len(found) == 0 {
		return nil, nil
	}
	name := filepath.Base(src)
	override := filepath.Join(target, name)
	migrated := filepath.Join(target, MigratedPrefix+name)
	inPlace := sameDir(filepath.Dir(src), target)
	if inPlace {
		override = src
	} else if _, err := os.Lstat(override); err == nil {
		return nil, Refusal{File: src, Why: override + " overrides it already, so udevd does not read it"}
	}
	if _, err := os.Lstat(migrated); err == nil {
		return nil, Refusal{File: src, Why: migrated + " exists already"}
	}
	convert := map[int]bool{} // by first line
	for _, f := range found {
		if f.ViaRUN {
			return nil, Refusal{File: src, Line: f.Line, Why: "a RUN program writes queue/" + f.Attr + ": only an ATTR{} write can be converted"}
		}
		convert[f.Line] = true
	}
	if err := checkRules(src, rules, convert); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", src, err)
	}
	ov := overrideText(string(data), rules, convert, migrated)
	ovRules, err := readRules(strings.NewReader(ov))
	if err != nil {
		return nil, fmt.Errorf("override of %s: %w", src, err)
	}
	plan := []Change{{Path: migrated, Source: src, Data: migratedText(src, rules, convert)}}
	if inPlace || hasEffect(ovRules) {
		plan = append(plan, Change{Path: override, Source: src, Data: ov, Base: string(data), InPlace: inPlace})
	} else {
		plan = append(plan, Change{Path: override, Source: src, Mask: true})
	}
	return plan, nil
}

func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// checkRules refuses what would change meaning once the writes happen
// after all rules (iosched runs from RUN, which udevd starts after every
// rule): a condition on the current value that is not a compare-first
// guard, a later read of a converted attribute, a write iosched does not
// know or a value it would reject.
func checkRules(src string, rules []rule, convert map[int]bool) error {
	written := map[string]int{} // attribute -> line of the first converted write
	for _, r := range rules {
		for _, k := range r.keys {
			for attr, line := range written {
				if reads(k, attr) {
					return Refusal{File: src, Line: r.line, Why: fmt.Sprintf("%s reads queue/%s, which line %d writes: once converted, iosched writes it only after all rules ran", k.original, attr, line)}
				}
			}
		}
		if !convert[r.line] {
			continue
		}
		for _, k := range r.keys {
			attr, ok := queueWrite(k)
			if !ok {
				continue
			}
			if !known(attr) {
				return Refusal{File: src, Line: r.line, Why: "iosched does not know queue/" + attr + ", so no property can carry it"}
			}
			if err := checkValue(attr, k.value); err != nil {
				return Refusal{File: src, Line: r.line, Why: fmt.Sprintf("iosched would reject %s: %v", k.original, err)}
			}
			if g := guard(r.keys, attr, k.value); g.other {
				return Refusal{File: src, Line: r.line, Why: "a condition on the current queue/" + attr + " other than a compare-first guard: the rule depends on the value it changes"}
			}
			for _, o := range r.keys {
				if o.name != "ATTR" && reads(o, attr) {
					return Refusal{File: src, Line: r.line, Why: fmt.Sprintf("%s reads queue/%s, which the same rule writes", o.original, attr)}
				}
			}
		}
		for _, k := range r.keys {
			if attr, ok := queueWrite(k); ok {
				if _, seen := written[attr]; !seen {
					written[attr] = r.line
				}
			}
		}
	}
	return nil
}

// reads reports whether key k reads queue/attr: a match on it, or a value
// that names it ($attr{queue/...}, a PROGRAM or RUN that reads the file).
func reads(k key, attr string) bool {
	if (k.name == "ATTR" || k.name == "ATTRS") && k.match() && k.attr == "queue/"+attr {
		return true
	}
	return namesAttr(k.value, attr)
}

// checkValue checks a value the way iosched will when the property
// reaches it; a value with udev substitutions is known only at event time.
func checkValue(attr, value string) error {
	if strings.ContainsAny(value, "$%") {
		return nil
	}
	if attr == queueattr.Scheduler {
		_, err := sched.ParseList(value)
		return err
	}
	s, err := queueattr.Lookup(attr)
	if err != nil {
		return err
	}
	return s.Check(value)
}

// hasEffect reports whether any rule does more than match, jump or label.
func hasEffect(rules []rule) bool {
	for _, r := range rules {
		for _, k := range r.keys {
			if !k.match() && k.name != "GOTO" && k.name != "LABEL" {
				return true
			}
		}
	}
	return false
}

// withoutQueueWrites is the rule with its converted writes removed.
func withoutQueueWrites(r rule) []string {
	var keep []string
	for _, k := range r.keys {
		if attr, ok := queueWrite(k); ok && known(attr) {
			continue
		}
		keep = append(keep, k.original)
	}
	return keep
}

// overrideText is the source with each converted rule rewritten without
// its queue writes, or commented out when only conditions are left.
func overrideText(data string, rules []rule, convert map[int]bool, migrated string) string {
	lines := strings.SplitAfter(data, "\n")
	var b strings.Builder
	b.WriteString("# Written by `iosched audit --fix`: the freezing queue writes of this file\n")
	b.WriteString("# moved to " + migrated + " as properties.\n")
	b.WriteString("# `iosched audit --undo` takes this back.\n")
	next := 0
	for _, r := range rules {
		if !convert[r.line] {
			continue
		}
		b.WriteString(strings.Join(lines[next:r.line-1], ""))
		rest := withoutQueueWrites(r)
		b.WriteString("# line " + fmt.Sprint(r.line) + ": queue writes moved to " + filepath.Base(migrated) + "\n")
		effect := false
		for _, k := range r.keys {
			if _, ok := queueWrite(k); !ok && !k.match() {
				effect = true
			}
		}
		if effect {
			b.WriteString(strings.Join(rest, ", ") + "\n")
		}
		next = r.end
	}
	b.WriteString(strings.Join(lines[next:], ""))
	s := b.String()
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// migratedText is the converted rules with the jumps and labels around
// them, each preceded by a comment naming its source line.
func migratedText(src string, rules []rule, convert map[int]bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by `iosched audit --fix` from %s: its queue writes as the\n", src)
	b.WriteString("# properties " + PolicyRules + " and " + RunRules + " act on (iosched writes\n")
	b.WriteString("# only what would change), with the GOTO and LABEL lines they depend on.\n")
	b.WriteString("# `iosched audit --undo` removes this file.\n")
	for _, r := range rules {
		var text string
		switch {
		case convert[r.line]:
			text = replacement(r.keys, false)
		case r.gotoLabel() != "":
			var keep []string
			for _, k := range r.keys {
				if k.match() || k.name == "GOTO" || k.name == "LABEL" {
					keep = append(keep, k.original)
				}
			}
			text = strings.Join(keep, ", ")
		case r.label() != "":
			text = fmt.Sprintf("LABEL=%q", r.label())
		default:
			continue
		}
		fmt.Fprintf(&b, "# %s:%d\n%s\n", src, r.line, text)
	}
	return b.String()
}

// Manifest records the files Fix wrote, so that Undo removes exactly
// those, and only while they hold what Fix wrote.
type Manifest struct {
	Files []Written `json:"files"`
}

// Written is one file Fix wrote.
type Written struct {
	Path   string `json:"path"`
	Source string `json:"source"`
	SHA256 string `json:"sha256,omitempty"` // of the content
	Link   string `json:"link,omitempty"`   // a symlink's target
	// Original is the content of a file of the target directory that
	// Fix rewrote in place; Undo writes it back.
	Original *string `json:"original,omitempty"`
}

func hash(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// ReadManifest reads target's manifest; a missing one is empty.
func ReadManifest(target string) (Manifest, error) {
	var m Manifest
	p := filepath.Join(target, ManifestName)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("read %s: %w", p, err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("read %s: %w", p, err)
	}
	return m, nil
}

func writeManifest(target string, m Manifest) error {
	p := filepath.Join(target, ManifestName)
	if len(m.Files) == 0 {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", p, err)
		}
		return nil
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(p, append(data, '\n'))
}

// writeAtomic writes through a temporary file in the same directory and
// renames it into place, so that udevd never reads half a file.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".iosched-fix-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ApplyFix writes the planned files into target and records them in its
// manifest. A file that exists already is never replaced; on any error
// the files written so far are removed again.
func ApplyFix(target string, plan []Change) error {
	m, err := ReadManifest(target)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(target, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", target, err)
	}
	var done []string
	undo := func() {
		for _, p := range done {
			os.Remove(p)
		}
	}
	for _, c := range plan {
		w := Written{Path: c.Path, Source: c.Source}
		if c.InPlace {
			cur, err := os.ReadFile(c.Path)
			if err != nil || string(cur) != c.Base {
				undo()
				return fmt.Errorf("rewrite %s: changed while planning", c.Path)
			}
			orig := c.Base
			w.Original = &orig
		} else if _, err := os.Lstat(c.Path); err == nil {
			undo()
			return fmt.Errorf("write %s: %w", c.Path, fs.ErrExist)
		}
		if c.Mask {
			w.Link = "/dev/null"
			err = os.Symlink(w.Link, c.Path)
		} else {
			w.SHA256 = hash([]byte(c.Data))
			err = writeAtomic(c.Path, []byte(c.Data))
		}
		if err != nil {
			undo()
			return fmt.Errorf("write %s: %w", c.Path, err)
		}
		if !c.InPlace {
			done = append(done, c.Path)
		}
		m.Files = append(m.Files, w)
	}
	if err := writeManifest(target, m); err != nil {
		undo()
		return err
	}
	return nil
}

// UndoResult is what Undo did with each file of the manifest.
type UndoResult struct {
	Removed  []string
	Restored []string // rewritten in place by Fix: the original is back
	Gone     []string // already removed by someone else
	Kept     []error  // changed since Fix wrote it: left in place
}

// Undo removes the files target's manifest records, each only if it
// still holds what Fix wrote; the manifest keeps the ones left.
func Undo(target string) (UndoResult, error) {
	var res UndoResult
	m, err := ReadManifest(target)
	if err != nil {
		return res, err
	}
	var left []Written
	for _, w := range m.Files {
		fi, err := os.Lstat(w.Path)
		if errors.Is(err, fs.ErrNotExist) {
			res.Gone = append(res.Gone, w.Path)
			continue
		}
		if err != nil {
			return res, fmt.Errorf("undo %s: %w", w.Path, err)
		}
		same := false
		if w.Link != "" {
			t, err := os.Readlink(w.Path)
			same = err == nil && t == w.Link && fi.Mode()&fs.ModeSymlink != 0
		} else if fi.Mode().IsRegular() {
			data, err := os.ReadFile(w.Path)
			same = err == nil && hash(data) == w.SHA256
		}
		if !same {
			res.Kept = append(res.Kept, fmt.Errorf("%s: changed since `iosched audit --fix` wrote it: left in place", w.Path))
			left = append(left, w)
			continue
		}
		if w.Original != nil {
			if err := writeAtomic(w.Path, []byte(*w.Original)); err != nil {
				return res, fmt.Errorf("undo %s: %w", w.Path, err)
			}
			res.Restored = append(res.Restored, w.Path)
			continue
		}
		if err := os.Remove(w.Path); err != nil {
			return res, fmt.Errorf("undo %s: %w", w.Path, err)
		}
		res.Removed = append(res.Removed, w.Path)
	}
	sort.Strings(res.Removed)
	return res, writeManifest(target, Manifest{Files: left})
}
