package rulesaudit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/sched"
)

// MarkerProperty is set beside IOSCHED_SCHEDULER by every converted
// scheduler write: PolicyRules keeps a policy an earlier file set ("",
// "leave this disk alone", included) when it sees it.
const MarkerProperty = "IOSCHED_SCHEDULER_SET"

// runProgram is what RunRules starts; a converted file sorting after
// RunRules starts it itself (lateRunLine), since the run rule decided
// before it.
const runProgram = "iosched-udev"

// lateProperty marks an event a converted rule sorting after RunRules
// set a property for; lateRunLine, at the end of each such file, starts
// iosched once for it, however many rules and files set it.
const (
	lateProperty = "IOSCHED_LATE"
	lateRunLine  = `ENV{` + lateProperty + `}=="1", ENV{` + lateProperty + `_RUN}!="1", ENV{` + lateProperty + `_RUN}="1", RUN+="` + runProgram + `"` + "\n"
)

// Refusal is a rule that Fix cannot convert with the same meaning.
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

// Change is one file Fix writes in the target directory: the source
// converted in place, under the source's own name, so that udevd reads
// it where it read the source and every other line stays as it was.
type Change struct {
	Path   string // target/NAME: the source itself, or the file that overrides it
	Source string
	Data   []byte
	Base   []byte // the source's content, for the diff
	Prior  State  // what Path holds now: what Undo puts back
	Notes  []string
}

// FixInput is what PlanFix works on.
type FixInput struct {
	Read   []string // every rules file udevd reads, in its order (List)
	Fix    []string // the ones to convert, each one of Read
	Target string   // where the converted files go: /etc/udev/rules.d
	Sys    string   // sysfs root: a scheduler tunable iosched does not know is converted only when a disk here has it
	// RenamedSchedulers converts a write of "noop" or "cfq", which
	// fails on every kernel iosched supports and leaves the disk as it
	// was, to what it meant ("none", "bfq"); without it the write is
	// dropped, which keeps today's outcome.
	RenamedSchedulers bool
}

// parsed is one rules file read for planning.
type parsed struct {
	path  string
	data  []byte
	rules []rule
	conv  map[int]bool // by first line; nil: not converted
	// unseen: converted rules (by first line) whose scheduler write an
	// unconverted write of the same disks precedes (unseenWrites)
	unseen map[int]bool
	// renamed: convert "noop" and "cfq" to what they meant, not drop them
	renamed bool
	sys     string // sysfs root of the running kernel (FixInput.Sys)
}

// PlanFix converts the freezing writes of in.Fix into properties, in
// place: each converted file keeps every line of its source, in its
// order, with only the queue-attribute assignments turned into the
// properties iosched acts on. Its conditions, PROGRAM and IMPORT keys,
// GOTO and LABEL lines and earlier ENV{} stay exactly as they were, and
// it runs where the source ran. A file with a rule that cannot keep its
// meaning is left out whole, and so, in turn, is any file whose
// conversion depended on it being converted; the plan holds every other
// file, and the error joins every Refusal found (nil when none), in the
// order udevd reads the files.
func PlanFix(in FixInput) ([]Change, error) {
	fix := map[string]bool{}
	for _, f := range in.Fix {
		fix[f] = true
	}
	var files []*parsed
	refused := map[string][]error{} // by file; a key with no error never is
	seen := map[string]bool{}
	refuse := func(err error) {
		var r Refusal
		if !errors.As(err, &r) {
			return
		}
		if !seen[r.Error()] {
			seen[r.Error()] = true
			refused[r.File] = append(refused[r.File], r)
		}
	}
	for _, path := range in.Read {
		data, err := os.ReadFile(path)
		if err != nil {
			if fix[path] {
				return nil, fmt.Errorf("read %s: %w", path, err)
			}
			continue // udevd skips it too; List reported it
		}
		rules, err := parseRules(string(data))
		if err != nil {
			if fix[path] {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			continue
		}
		p := &parsed{path: path, data: data, rules: rules, renamed: in.RenamedSchedulers, sys: in.Sys}
		if fix[path] {
			p.conv = map[int]bool{}
			for _, f := range audit(path, rules) {
				if f.ViaRUN {
					refuse(Refusal{File: path, Line: f.Line, Why: "a RUN program writes queue/" + f.Attr + ": only an ATTR{} write can be converted"})
					continue
				}
				if f.Device != "" {
					refuse(Refusal{File: path, Line: f.Line, Why: "ATTR{[" + clip(f.Device) + "]...} writes another device's queue: no property of this event can carry it"})
					continue
				}
				p.conv[f.Line] = true
			}
			if len(p.conv) == 0 {
				p.conv = nil
			} else {
				convertTunables(p)
			}
		}
		files = append(files, p)
	}
	// Leaving a file out turns its writes into unconverted ones, which
	// may keep another file from converting: until nothing changes.
	var plan []Change
	for {
		for _, p := range files {
			if _, no := refused[p.path]; no {
				p.conv = nil
			}
		}
		before := len(refused)
		for _, err := range crossCheck(files) {
			refuse(err)
		}
		unseenWrites(files)
		plan = plan[:0]
		for _, p := range files {
			if p.conv == nil {
				continue
			}
			if _, no := refused[p.path]; no {
				continue
			}
			c, err := planFile(p, in)
			var r Refusal
			if errors.As(err, &r) {
				refuse(err)
				continue
			}
			if err != nil {
				return nil, err
			}
			plan = append(plan, c)
		}
		if len(refused) == before {
			break
		}
	}
	var all []error
	for _, p := range files {
		errs := refused[p.path]
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].(Refusal).Line < errs[j].(Refusal).Line })
		all = append(all, errs...)
	}
	for _, c := range plan {
		if _, no := refused[c.Source]; no {
			return nil, fmt.Errorf("%s: planned and refused", c.Source)
		}
	}
	return plan, errors.Join(all...)
}

// clipAt is the most of a value from a rules file a message quotes: a
// 20 KiB line stays readable.
const clipAt = 64

// clip shortens s to clipAt bytes, saying so.
func clip(s string) string {
	if len(s) <= clipAt {
		return s
	}
	return s[:clipAt] + fmt.Sprintf("...(%d bytes)", len(s))
}

// convertTunables converts the scheduler tunable writes change events
// reach too, though they do not freeze: left as ATTR{}, they would run
// before a converted scheduler switch that resets them, not after it.
func convertTunables(p *parsed) {
	for i, ok := range reachable(p.rules, "change") {
		r := p.rules[i]
		if !ok || !onAction(r.keys, "change") {
			continue
		}
		for _, k := range r.keys {
			if attr, w := queueWrite(k); w && strings.HasPrefix(attr, queueattr.TunablePrefix) {
				p.conv[r.line] = true
			}
		}
	}
}

// crossCheck refuses what would change meaning once the converted writes
// happen after every rule (iosched runs from RUN, which udevd starts
// after all rules): a later rule, in any file, that reads an attribute a
// converted rule writes, or writes it again without being converted
// (that write would now come first). RunRules only starts iosched, and
// PolicyRules keeps a scheduler an earlier file set (MarkerProperty), so
// their reads of queue/scheduler do not count.
func crossCheck(files []*parsed) []error {
	type loc struct {
		file string
		rule rule
	}
	written := map[string][]loc{}
	var attrs []string // written's keys in the order first written
	var refused []error
	for _, p := range files {
		base := filepath.Base(p.path)
		if base == RunRules {
			continue
		}
		for _, r := range p.rules {
			if err := checkRule(p, r); err != nil {
				refused = append(refused, err)
			}
			for _, k := range r.keys {
				for _, attr := range attrs {
					if base == PolicyRules && attr == queueattr.Scheduler {
						continue
					}
					for _, w := range written[attr] {
						if disjoint(w.rule, r) {
							continue // no device matches both
						}
						if reads(k, attr) {
							refused = append(refused, Refusal{File: w.file, Line: w.rule.line, Why: fmt.Sprintf(
								"%s:%d: %s reads queue/%s, which this rule writes: converted, iosched would write it only after all rules ran",
								p.path, r.line, clip(k.original), attr)})
						}
						if a, ok := queueWrite(k); ok && !p.conv[r.line] && (a == attr ||
							attr == queueattr.Scheduler && strings.HasPrefix(a, queueattr.TunablePrefix)) {
							refused = append(refused, Refusal{File: w.file, Line: w.rule.line, Why: fmt.Sprintf(
								"%s:%d writes queue/%s after it and is not converted (no change event reaches it, or its file is not fixed): converted, this rule's write would come after it rather than before",
								p.path, r.line, a)})
						}
					}
				}
			}
			if !p.conv[r.line] {
				continue
			}
			for _, k := range r.keys {
				if attr, ok := queueWrite(k); ok {
					if _, seen := written[attr]; !seen {
						attrs = append(attrs, attr)
					}
					written[attr] = append(written[attr], loc{p.path, r})
				}
			}
		}
	}
	return refused
}

// unseenWrites marks, in each file's unseen, the converted scheduler
// writes that an unconverted write of queue/scheduler for the same disks
// precedes. systemd-udevd reads an attribute once per event and keeps
// the value (sd-device's cache), and in systemd 257 its ATTR{} writes do
// not update that value: once any rule read queue/scheduler before the
// unconverted write (the corpus's 60-io-scheduler.rules does), RunRules
// compares the scheduler of the event's start, not the one the write
// left. When that is the converted choice, the helper would not start
// and the unconverted write would stay, where the source's own write,
// coming after it, replaced it. Such a converted rule also sets
// IOSCHED_SETTINGS, which starts the helper whatever udevd read; the
// helper reads the file itself. A write after the converted one is
// refused by crossCheck.
func unseenWrites(files []*parsed) {
	var writers []rule // unconverted scheduler writes so far
	for _, p := range files {
		p.unseen = nil
		base := filepath.Base(p.path)
		if base == RunRules || base == PolicyRules {
			continue
		}
		for _, r := range p.rules {
			for _, k := range r.keys {
				if attr, ok := queueWrite(k); !ok || attr != queueattr.Scheduler {
					continue
				}
				if !p.conv[r.line] {
					writers = append(writers, r)
					break
				}
				for _, w := range writers {
					if !disjoint(w, r) {
						if p.unseen == nil {
							p.unseen = map[int]bool{}
						}
						p.unseen[r.line] = true
						break
					}
				}
				break
			}
		}
	}
}

// disjoint reports whether no device can match both rules: each has a
// KERNEL== pattern, and no name matches both (kernelsDisjoint).
func disjoint(a, b rule) bool {
	for _, ka := range a.keys {
		if ka.name != "KERNEL" || ka.op != "==" || ka.fold {
			continue
		}
		for _, kb := range b.keys {
			if kb.name == "KERNEL" && kb.op == "==" && !kb.fold && kernelsDisjoint(ka.value, kb.value) {
				return true
			}
		}
	}
	return false
}

// kernelsDisjoint reports whether no name matches both patterns, told
// from the literal text each alternative starts with: "bcache*" and
// "sd[a-z]" differ at their first byte. Anything it cannot tell is not
// disjoint.
func kernelsDisjoint(a, b string) bool {
	if strings.ContainsAny(a+b, "$%\\") {
		return false // substituted or escaped: known only at event time
	}
	for _, x := range strings.Split(a, "|") {
		for _, y := range strings.Split(b, "|") {
			if !altsDisjoint(x, y) {
				return false
			}
		}
	}
	return true
}

func altsDisjoint(x, y string) bool {
	px, wx := literalPrefix(x)
	py, wy := literalPrefix(y)
	n := min(len(px), len(py))
	if px[:n] != py[:n] {
		return true
	}
	// One is a whole literal name shorter than the other's literal start.
	return !wx && len(px) < len(py) || !wy && len(py) < len(px)
}

// literalPrefix is the text of a glob before its first wildcard, and
// whether it has one.
func literalPrefix(p string) (string, bool) {
	if i := strings.IndexAny(p, "*?["); i >= 0 {
		return p[:i], true
	}
	return p, false
}

// checkRule refuses a converted rule whose own keys keep it from
// keeping its meaning.
func checkRule(p *parsed, r rule) error {
	if !p.conv[r.line] {
		return nil
	}
	for _, k := range r.keys {
		attr, ok := queueWrite(k)
		if !ok {
			continue
		}
		if !known(attr) {
			return Refusal{File: p.path, Line: r.line, Why: "iosched does not know queue/" + attr + ", so no property can carry it"}
		}
		if dropped(attr, k.value, p.renamed) {
			continue
		}
		if err := checkValue(attr, schedValue(attr, k.value)); err != nil {
			return Refusal{File: p.path, Line: r.line, Why: fmt.Sprintf("iosched would reject %s: %v", clip(k.original), err)}
		}
		if attr == queueattr.Scheduler && !strings.ContainsAny(k.value, "$%") {
			if n := sched.Effective(schedValue(attr, k.value)); !schedulerAvailable(p.sys, n) {
				return Refusal{File: p.path, Line: r.line, Why: fmt.Sprintf(
					"%s: no disk of the running kernel offers %q (%s) and iosched does not know it: the write fails here and leaves the scheduler an earlier rule chose, which a converted write would replace",
					clip(k.original), clip(n), filepath.Join(p.sys, "block", "*", "queue", "scheduler"))}
			}
		}
		if g := guard(r.keys, attr, k.value); g.other {
			return Refusal{File: p.path, Line: r.line, Why: "a condition on the current queue/" + attr + " other than a compare-first guard: the rule depends on the value it changes"}
		}
		for _, o := range r.keys {
			// Matches in the rule run before its own write, converted
			// or not.
			if o.name != "ATTR" && o.name != "TEST" && reads(o, attr) {
				return Refusal{File: p.path, Line: r.line, Why: fmt.Sprintf("%s reads queue/%s, which the same rule writes", clip(o.original), attr)}
			}
		}
	}
	return nil
}

// schedValue maps a scheduler name kernels dropped with the
// single-queue block layer to the one that took its place: "noop" meant
// "none", "cfq" "bfq" (as elevator= reads them).
func schedValue(attr, v string) string {
	if attr != queueattr.Scheduler {
		return v
	}
	switch v {
	case "noop":
		return sched.None
	case "cfq":
		return "bfq"
	}
	return v
}

// dropped reports a scheduler write that fails on every kernel iosched
// supports, so that the disk keeps its scheduler: converted to nothing,
// which keeps that, unless renamed asks for what it meant.
func dropped(attr, v string, renamed bool) bool {
	return !renamed && schedValue(attr, v) != v
}

// schedulerAvailable reports whether a write of scheduler name can
// succeed: iosched knows it (none, and the schedulers of its tunables
// table: mq-deadline with its alias deadline, bfq, kyber), or a disk of
// the running kernel (sysfs root sys) offers it.
func schedulerAvailable(sys, name string) bool {
	if sched.IsNone(name) || name == "deadline" || len(queueattr.Tunables[name]) > 0 {
		return true
	}
	files, _ := filepath.Glob(filepath.Join(sys, "block", "*", "queue", "scheduler"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if l, err := sched.Parse(string(data)); err == nil {
			if _, ok := l.Offers(name); ok {
				return true
			}
		}
	}
	return false
}

// reads reports whether key k reads queue/attr: a match on it, or a value
// that names it ($attr{queue/...}, a PROGRAM or RUN that reads the file).
func reads(k key, attr string) bool {
	if (k.name == "ATTR" || k.name == "ATTRS") && k.match() {
		if a, dev, ok := queueAttr(k.attr); ok && dev == "" && a == attr {
			// A scheduler pattern with no wildcard matches only the
			// line of a disk with no choice ("none"), which no write
			// changes.
			return attr != queueattr.Scheduler || strings.ContainsAny(k.value, "*?[")
		}
	}
	if attr == queueattr.Scheduler && readsTunables(k) {
		return true // the switch decides which tunables exist and their values
	}
	// TEST only asks whether the file exists, which no other write changes.
	return k.name != "TEST" && namesAttr(k.value, attr)
}

// readsTunables reports whether k reads a scheduler tunable or asks
// whether one exists: a match on ATTR{queue/iosched/...}, a TEST of
// such a path, or a value that names one.
func readsTunables(k key) bool {
	if (k.name == "ATTR" || k.name == "ATTRS") && k.match() {
		if a, dev, ok := queueAttr(k.attr); ok && dev == "" && strings.HasPrefix(a, queueattr.TunablePrefix) {
			return true
		}
	}
	if _, write := queueWrite(k); write {
		return false
	}
	return strings.Contains(k.value, "queue/"+queueattr.TunablePrefix)
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

// tunableKnown reports whether iosched's table names a scheduler
// tunable.
func tunableKnown(name string) bool {
	for _, ts := range queueattr.Tunables {
		for _, t := range ts {
			if t == name {
				return true
			}
		}
	}
	return false
}

// kernelHasTunable reports whether a disk of the running kernel (sysfs
// root sys) has queue/iosched/name.
func kernelHasTunable(sys, name string) bool {
	m, _ := filepath.Glob(filepath.Join(sys, "block", "*", "queue", "iosched", name))
	return len(m) > 0
}

// edit replaces data[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// planFile converts one source in place.
func planFile(p *parsed, in FixInput) (Change, error) {
	name := filepath.Base(p.path)
	path := filepath.Join(in.Target, name)
	if sameDir(filepath.Dir(p.path), in.Target) {
		path = p.path
	}
	prior, err := stateOf(OS, path)
	if err != nil {
		return Change{}, err
	}
	if path != p.path && prior.Kind != kindAbsent {
		return Change{}, Refusal{File: p.path, Why: fmt.Sprintf("%s exists (%s) and udevd does not read it in its place: move it away first", path, prior.Kind)}
	}
	data, notes, err := convert(p, name > RunRules, in.Sys)
	if err != nil {
		return Change{}, err
	}
	return Change{Path: path, Source: p.path, Data: data, Base: p.data, Prior: prior, Notes: notes}, nil
}

// convert is p with its converted rules' queue writes turned into
// properties, byte for byte the same elsewhere; afterRun: the file
// sorts after RunRules, so its converted rules start iosched themselves.
func convert(p *parsed, afterRun bool, sys string) ([]byte, []string, error) {
	var edits []edit
	var notes []string
	late := false // a converted rule sorts after RunRules
	for _, r := range p.rules {
		if !p.conv[r.line] {
			continue
		}
		converted := map[string]string{}
		for _, k := range r.keys {
			if attr, ok := queueWrite(k); ok {
				converted[attr] = k.value
			}
		}
		last := -1
		var ruleEdits []edit
		removed := 0
		acts := 0 // keys other than matches that the rule keeps
		for _, k := range r.keys {
			if attr, write := queueWrite(k); !k.match() && !(write && dropped(attr, k.value, p.renamed)) {
				acts++
			}
		}
		for i, k := range r.keys {
			var text string
			attr, write := queueWrite(k)
			switch {
			case write && dropped(attr, k.value, p.renamed):
				notes = append(notes, fmt.Sprintf("%s:%d: %q: no kernel iosched supports has this scheduler, so the write fails today and the disk keeps its scheduler; dropped, which keeps that (--renamed-schedulers converts it to %q instead)",
					p.path, r.line, clip(k.value), schedValue(attr, k.value)))
				text = ""
			case write:
				text = propertyText(k, attr)
				if attr == queueattr.Scheduler && p.unseen[r.line] && !afterRun {
					// lateRunLine starts the helper anyway.
					text += ", ENV{IOSCHED_SETTINGS}=\"1\""
				}
				if v := schedValue(attr, k.value); v != k.value {
					notes = append(notes, fmt.Sprintf("%s:%d: %q converted to %q, what it meant (--renamed-schedulers)", p.path, r.line, k.value, v))
				}
				if t, ok := strings.CutPrefix(attr, queueattr.TunablePrefix); ok && !tunableKnown(t) {
					if !kernelHasTunable(sys, t) {
						return nil, nil, Refusal{File: p.path, Line: r.line, Why: fmt.Sprintf(
							"queue/%s: no disk of the running kernel has it (%s) and iosched's table does not know it",
							attr, filepath.Join(sys, "block", "*", "queue", attr))}
					}
					text += ", ENV{IOSCHED_SETTINGS}=\"1\""
				}
				last = i
			case isConvertedGuard(k, converted):
				text = ""
			default:
				continue
			}
			s, e, ok := r.span(k)
			if !ok {
				return nil, nil, Refusal{File: p.path, Line: r.line, Why: clip(k.original) + " is split over a line continuation: convert it by hand"}
			}
			if text == "" {
				s, e = removal(p.data, s, e)
				removed++
			}
			ruleEdits = append(ruleEdits, edit{s, e, text})
		}
		if removed > 0 && acts == 0 && r.line == r.end {
			// Nothing of the rule is left ("noop" alone), or matches
			// only, a line udevd ignores and udevadm verify fails (its
			// assignment a dropped "noop"): a comment in its place
			// keeps the line, and says what became of it.
			s, _, _ := r.span(r.keys[0])
			_, e, _ := r.span(r.keys[len(r.keys)-1])
			ruleEdits = []edit{{s, e, droppedComment + string(p.data[s:e])}}
		}
		edits = append(edits, ruleEdits...)
		if afterRun && last >= 0 {
			_, e, _ := r.span(r.keys[last])
			edits = append(edits, edit{e, e, ", ENV{" + lateProperty + "}=\"1\""})
			late = true
		}
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var b strings.Builder
	if len(p.data) == 0 || p.data[0] != '\r' && p.data[0] != 0 {
		// Not before a leading "\r" or NUL: read_line() would take the
		// header's "\n" and it as one line end.
		b.WriteString(convertedHeader)
	}
	at := 0
	for _, ed := range edits {
		if ed.start < at {
			continue
		}
		b.Write(p.data[at:ed.start])
		b.WriteString(ed.text)
		at = ed.end
	}
	b.Write(p.data[at:])
	if late {
		// One line for the file, whatever number of its rules
		// converted, and one run for all such files: udevd runs each
		// RUN+= it is given, the same program twice included.
		text := b.String()
		if n := len(text); n > 0 && !strings.ContainsRune("\n\r\x00", rune(text[n-1])) {
			b.WriteByte('\n')
		}
		if strings.HasSuffix(strings.TrimRight(text, "\r\n\x00"), "\\") {
			return nil, nil, Refusal{File: p.path, Why: "it ends in a line continuation, which would join the line that starts iosched after its rules"}
		}
		b.WriteString(lateRunLine)
	}
	data := []byte(b.String())
	if _, err := parseRules(string(data)); err != nil {
		return nil, nil, fmt.Errorf("converted %s: %w", p.path, err)
	}
	return data, notes, nil
}

// droppedComment replaces a one-line rule of which conversion keeps
// nothing.
const droppedComment = "# dropped by `iosched audit --fix`: "

// convertedHeader starts every converted file.
const convertedHeader = "# Converted in place by `iosched audit --fix`: its ATTR{queue/...} writes are\n" +
	"# now the properties iosched applies, writing only what would change.\n" +
	"# `iosched audit --undo` puts the original back.\n"

// isConvertedGuard reports a compare-first guard on an attribute the
// rule's converted write sets: iosched compares first, and a guard left
// in place would let the policy rules override the rule whenever the
// value is already there.
func isConvertedGuard(k key, converted map[string]string) bool {
	if k.name != "ATTR" || !k.match() {
		return false
	}
	attr, dev, ok := queueAttr(k.attr)
	if !ok || dev != "" {
		return false
	}
	v, conv := converted[attr]
	if !conv {
		return false
	}
	g := guard([]key{k}, attr, v)
	return g.stops || g.never != ""
}

// removal widens a key's span over the separator that goes with it: the
// comma after it when another key follows on the line, else the one
// before it.
func removal(data []byte, s, e int) (int, int) {
	j := e
	for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == ',') {
		j++
	}
	if j < len(data) && j > e && !strings.ContainsRune("\n\r\x00\\", rune(data[j])) && strings.ContainsRune(string(data[e:j]), ',') {
		return s, j
	}
	i := s
	for i > 0 && (data[i-1] == ' ' || data[i-1] == '\t' || data[i-1] == ',') {
		i--
	}
	return i, e
}

func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
