// Package rulesaudit finds udev rules that write a queue attribute whose
// every write freezes the queue, on change events: udev synthesises a
// change event each time a process closes a disk it had open for writing,
// so such a rule freezes the queue again and again for nothing. Fix turns
// those writes into the properties the iosched rules act on.
package rulesaudit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/iosched/iosched/helper/queueattr"
)

// Dirs are udev's rules directories in precedence order: a file in an
// earlier directory masks a file of the same name in a later one
// (systemd's udev(7), RULES FILES).
var Dirs = []string{"/etc/udev/rules.d", "/run/udev/rules.d", "/usr/local/lib/udev/rules.d", "/usr/lib/udev/rules.d", "/lib/udev/rules.d"}

// The shipped iosched rules a local override must sort between.
const (
	PolicyRules = "60-iosched.rules"
	RunRules    = "99-iosched-run.rules"
)

// Finding is one write of a freezing attribute on change events.
type Finding struct {
	File    string
	Line    int
	Attr    string // queue attribute, e.g. "scheduler"
	Value   string
	ViaRUN  bool                    // written by a RUN program rather than ATTR{}
	Freezes []queueattr.FreezeRange // the kernels on which the write freezes
	Guard   string                  // a guard on the attribute that never stops the write
	Replace string                  // the iosched rule that replaces the whole rule
	Device  string                  // ATTR{[SUBSYSTEM/KERNEL]...}: the device written, not the event's
	AddOnly bool                    // written on add events only
	Udev252 bool                    // only udev 252 performs it (Why252 says why)
	Not252  bool                    // udev 252 does not perform it, 257 and later do (Why252 says why)
	Why252  string
}

func (f Finding) String() string { return f.Text(true) }

// Text is the finding, with the replacement rule when withReplace: a
// rule with several writes needs it once.
func (f Finding) Text(withReplace bool) string {
	how := fmt.Sprintf("ATTR{queue/%s}=%q", f.Attr, f.Value)
	if f.Device != "" {
		how = fmt.Sprintf("ATTR{[%s]queue/%s}=%q", f.Device, f.Attr, f.Value)
	}
	if f.Udev252 {
		how += " (udev 252 only: " + f.Why252 + ")"
	}
	if f.Not252 {
		how += " (udev 257 and later only: " + f.Why252 + ")"
	}
	if f.ViaRUN {
		how = "a RUN program writes queue/" + f.Attr
	}
	s := fmt.Sprintf("%s:%d: %s on change events: %s", f.File, f.Line, how, FreezeText(f.Freezes))
	if f.Guard != "" {
		s += fmt.Sprintf("\n    the guard %s never stops it: queue/scheduler reads the whole list (\"mq-deadline [%s] none\"), never the bare name; the glob that works is ATTR{queue/scheduler}!=\"*[[]%s[]]*\"",
			f.Guard, f.Value, f.Value)
	}
	if !withReplace || f.Device != "" {
		return s
	}
	return s + fmt.Sprintf("\n    converted in place (`iosched audit --fix` does it, in a file of the same name in /etc/udev/rules.d), the rule reads:\n        %s",
		f.Replace)
}

// FreezeText says on which kernels a write freezes the queue, e.g.
// "freezes the queue on every write on 6.12 to 6.17".
func FreezeText(rs []queueattr.FreezeRange) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, r.String())
	}
	return "freezes the queue on every write on " + strings.Join(parts, ", ")
}

// Listing is what List found: the rules files udevd reads, in its order,
// and the entries it skips.
type Listing struct {
	Files   []string
	Skipped []error // a *.rules entry udevd does not read either, and why
}

// List lists the *.rules files of dirs as udevd reads them
// (conf_files_list with CONF_FILES_REGULAR|CONF_FILES_FILTER_MASKED):
// sorted by file name across all directories, a name in an earlier
// directory masking the same name in later ones, hidden names ignored.
// A link to /dev/null or an empty file masks and is not listed; an entry
// that is not a regular file (a directory, a dangling link) or a
// directory that cannot be read is skipped and reported, and masks
// nothing. Missing directories are skipped.
func List(dirs []string) Listing {
	var l Listing
	byName := map[string]string{} // "" when masked
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			l.Skipped = append(l.Skipped, fmt.Errorf("list rules in %s: %w", d, err))
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if !strings.HasSuffix(name, ".rules") || strings.HasPrefix(name, ".") {
				continue
			}
			if _, seen := byName[name]; seen {
				continue
			}
			p := filepath.Join(d, name)
			fi, err := os.Stat(p)
			switch {
			case err != nil:
				l.Skipped = append(l.Skipped, fmt.Errorf("%s: %w (udevd skips it)", p, err))
			case masks(fi):
				byName[name] = ""
			case !fi.Mode().IsRegular():
				l.Skipped = append(l.Skipped, fmt.Errorf("%s: not a regular file (udevd skips it)", p))
			default:
				byName[name] = p
			}
		}
	}
	names := make([]string, 0, len(byName))
	for n, p := range byName {
		if p != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		l.Files = append(l.Files, byName[n])
	}
	return l
}

// masks reports whether an entry, followed through links, masks: an
// empty regular file or a device node such as /dev/null (systemd's
// null_or_empty).
func masks(fi fs.FileInfo) bool {
	if fi.Mode().IsRegular() {
		return fi.Size() == 0
	}
	return fi.Mode()&fs.ModeDevice != 0
}

// AddOnly returns the writes of one rules file that add events perform
// and change events do not.
func AddOnly(path string) ([]Finding, error) {
	rules, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return addOnly(path, rules), nil
}

// AddOnlyText says what an add-only write does; with policy (iosched's
// policy rules are installed) a scheduler write is a conflict.
func AddOnlyText(f Finding, policy bool) string {
	s := fmt.Sprintf("%s:%d: ATTR{queue/%s}=%q on add events only: at least twice a boot (the initramfs and coldplug), not on change",
		f.File, f.Line, f.Attr, f.Value)
	if Conflicts(f, policy) {
		s += fmt.Sprintf("\n    conflict: %s sets a scheduler policy too, so on every boot this rule switches the disk and iosched switches it back (two switches a disk); turn it into ENV{IOSCHED_SCHEDULER}=%q, ENV{%s}=\"1\" for add and change, or remove it",
			PolicyRules, f.Value, MarkerProperty)
	}
	return s
}

// Run is a RUN key of a rules file.
type Run struct {
	Line    int
	Command string
}

// RunCommands returns the RUN keys that add or change events on block
// disks may reach in one rules file.
func RunCommands(path string) ([]Run, error) {
	rules, err := readFile(path)
	if err != nil {
		return nil, err
	}
	add, change := reachable(rules, "add"), reachable(rules, "change")
	var out []Run
	for i, r := range rules {
		if !(add[i] && onAction(r.keys, "add") || change[i] && onAction(r.keys, "change")) {
			continue
		}
		for _, k := range r.keys {
			if k.name == "RUN" && !k.match() {
				out = append(out, Run{r.line, k.value})
			}
		}
	}
	return out, nil
}

// File audits one rules file as udev 257 and later read it, with the
// writes udev 252 (Debian 12) performs otherwise (Finding.Udev252,
// Finding.Not252). A file with a line too long for udevd comes with its
// error and the writes udev 252 still performs: those of the rules
// before the line, every GOTO falling through.
func File(path string) ([]Finding, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("audit %s: %w", path, err)
	}
	rules, err := parseRules(string(data))
	old, _ := parseRulesAs(string(data), udev252)
	if errors.Is(err, ErrLineTooLong) {
		found := audit252(path, old, err)
		for i := range found {
			found[i].Udev252 = true
			found[i].Why252 = "it reads the rules before the line too long, every GOTO falling through; 257 and later skip the file"
		}
		return found, fmt.Errorf("audit %s: %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("audit %s: %w", path, err)
	}
	found := audit(path, rules)
	// udev 252 drops a line with an i"..." value, which 257 and later
	// read: the writes on such lines, and those a GOTO on one skipped.
	id := func(f Finding) string { return fmt.Sprint(f.Line, f.Attr, f.Value, f.Device, f.ViaRUN) }
	found252 := audit252(path, old, nil)
	in252 := map[string]bool{}
	for _, f := range found252 {
		in252[id(f)] = true
	}
	inNow := map[string]bool{}
	for i, f := range found {
		inNow[id(f)] = true
		if !in252[id(f)] {
			found[i].Not252 = true
			found[i].Why252 = `udev 252 has no i"..." prefix and drops a line with one`
		}
	}
	for _, f := range found252 {
		if !inNow[id(f)] {
			f.Udev252 = true
			f.Why252 = `udev 252 drops a line with an i"..." value, which 257 and later read`
			found = append(found, f)
		}
	}
	return found, nil
}

// audit252 is audit as udev 252 performs rules read in its dialect:
// after a line too long (err), every GOTO falls through, as 252 never
// resolves the file's GOTOs.
func audit252(path string, rules []rule, err error) []Finding {
	if errors.Is(err, ErrLineTooLong) {
		for i := range rules {
			rules[i].keys = slices.DeleteFunc(slices.Clone(rules[i].keys), func(k key) bool { return k.name == "GOTO" })
		}
	}
	return audit(path, rules)
}

func readFile(path string) ([]rule, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit %s: %w", path, err)
	}
	defer f.Close()
	rules, err := readRules(f)
	if err != nil {
		// The rules before a line too long come with the error.
		return rules, fmt.Errorf("audit %s: %w", path, err)
	}
	return rules, nil
}

// audit returns the writes udevd performs on a change event of a block
// disk (see reachable).
func audit(name string, rules []rule) []Finding { return auditAction(name, rules, "change") }

// auditAction returns the writes of the rules an event of action
// reaches.
func auditAction(name string, rules []rule, action string) []Finding {
	var found []Finding
	for i, ok := range reachable(rules, action) {
		if ok && onAction(rules[i].keys, action) && !partitionsOnly(rules[i].keys) {
			found = append(found, writes(name, rules[i])...)
		}
	}
	return found
}

// partitionsOnly reports a rule only a partition's event matches
// (ENV{DEVTYPE}=="partition", or !="disk"): a partition has no queue/,
// so its writes there fail and change nothing.
func partitionsOnly(keys []key) bool {
	for _, k := range keys {
		if k.name != "ENV" || k.attr != "DEVTYPE" || !k.match() {
			continue
		}
		disk, part := globMatch(k.value, "disk", k.fold), globMatch(k.value, "partition", k.fold)
		if k.op == "==" && part && !disk || k.op == "!=" && disk && !part {
			return true
		}
	}
	return false
}

// addOnly returns the writes an add event performs and a change event
// does not.
func addOnly(name string, rules []rule) []Finding {
	onChange := map[string]bool{}
	for _, f := range audit(name, rules) {
		onChange[fmt.Sprint(f.Line, f.Attr, f.Device, f.ViaRUN)] = true
	}
	var out []Finding
	for _, f := range auditAction(name, rules, "add") {
		if !onChange[fmt.Sprint(f.Line, f.Attr, f.Device, f.ViaRUN)] {
			f.AddOnly = true
			out = append(out, f)
		}
	}
	return out
}

// reachable marks the rules an event of action on a block disk may
// reach, over every GOTO/LABEL path: the first rule; the one after a
// reached rule unless that rule surely jumps; the LABEL rule a reached
// rule whose ACTION lets the event through may jump to. A GOTO to a
// label that does not follow in the file is ignored, as udevd ignores
// it.
func reachable(rules []rule, action string) []bool {
	reach := make([]bool, len(rules)+1)
	reach[0] = true
	for i, r := range rules {
		if !reach[i] {
			continue
		}
		if !onAction(r.keys, action) {
			reach[i+1] = true
			continue
		}
		j := -1
		if label := r.gotoLabel(); label != "" {
			j = labelAfter(rules, i, label)
		}
		if j > 0 {
			reach[j] = true
		}
		if j < 0 || !surelyJumps(r.keys) {
			reach[i+1] = true
		}
	}
	return reach[:len(rules)]
}

// labelAfter returns the index of the first rule after i with LABEL
// label, or -1: udevd resolves a GOTO forward within its file only.
func labelAfter(rules []rule, i int, label string) int {
	for j := i + 1; j < len(rules); j++ {
		if rules[j].label() == label {
			return j
		}
	}
	return -1
}

// onAction reports whether the rule's ACTION conditions let an event of
// action through; a rule without any does.
func onAction(keys []key, action string) bool {
	for _, k := range keys {
		if k.name != "ACTION" || !k.match() {
			continue
		}
		if globMatch(k.value, action, k.fold) != (k.op == "==") {
			return false
		}
	}
	return true
}

// surelyJumps reports whether events on block disks surely take the
// rule's GOTO: its only conditions are on ACTION (already known to pass)
// and on SUBSYSTEM, which is "block" here. Any other condition might
// not hold, so both ways are followed.
func surelyJumps(keys []key) bool {
	for _, k := range keys {
		switch {
		case k.name == "ACTION":
		case k.name == "SUBSYSTEM" && k.match():
			if globMatch(k.value, "block", k.fold) != (k.op == "==") {
				return false
			}
		case k.match():
			return false
		}
	}
	return true
}

// queueAttr splits an ATTR{} name into the queue attribute it names
// and the device of the [SUBSYSTEM/KERNEL] form ("" for the event's
// own), as the kernel's path lookup resolves it.
func queueAttr(name string) (attr, dev string, ok bool) {
	if strings.HasPrefix(name, "[") {
		j := strings.IndexByte(name, ']')
		if j < 0 {
			return "", "", false
		}
		dev, name = name[1:j], name[j+1:]
	}
	// Empty and "." components are nothing to the kernel's path lookup
	// ("./queue/scheduler", "queue/./scheduler"); ".." is left alone.
	var parts []string
	for _, c := range strings.Split(name, "/") {
		if c != "" && c != "." {
			parts = append(parts, c)
		}
	}
	if len(parts) < 2 || parts[0] != "queue" {
		return "", dev, false
	}
	return strings.Join(parts[1:], "/"), dev, true
}

// queueWrite returns the attribute an ATTR{queue/...}= key writes on the
// event's own device.
func queueWrite(k key) (string, bool) {
	attr, dev, ok := queueAttr(k.attr)
	if k.name != "ATTR" || !ok || dev != "" || !k.assign() {
		return "", false
	}
	return attr, true
}

// otherWrite returns the attribute and device an
// ATTR{[SUBSYSTEM/KERNEL]queue/...}= key writes on another device.
func otherWrite(k key) (string, string, bool) {
	attr, dev, ok := queueAttr(k.attr)
	if k.name != "ATTR" || !ok || dev == "" || !k.assign() {
		return "", "", false
	}
	return attr, dev, true
}

// known reports whether iosched can set attr through a property.
func known(attr string) bool {
	if attr == queueattr.Scheduler {
		return true
	}
	_, err := queueattr.Lookup(attr)
	return err == nil
}

// writes returns the freezing writes of one rule that no condition on the
// same attribute guards.
func writes(file string, r rule) []Finding {
	var out []Finding
	for _, k := range r.keys {
		if attr, dev, ok := otherWrite(k); ok {
			if ranges := queueattr.FreezeRanges(attr); ranges != nil {
				out = append(out, Finding{File: file, Line: r.line, Attr: attr, Value: k.value, Freezes: ranges, Device: dev})
			}
			continue
		}
		if attr, ok := queueWrite(k); ok {
			ranges := queueattr.FreezeRanges(attr)
			if ranges == nil {
				continue
			}
			g := guard(r.keys, attr, k.value)
			if g.stops {
				continue
			}
			out = append(out, Finding{File: file, Line: r.line, Attr: attr, Value: k.value,
				Freezes: ranges, Guard: g.never, Replace: Replacement(r.keys)})
			continue
		}
		if k.name == "RUN" && !k.match() {
			for _, a := range runWrites(k.value) {
				out = append(out, Finding{File: file, Line: r.line, Attr: a, ViaRUN: true,
					Freezes: queueattr.FreezeRanges(a),
					Replace: "set ENV{" + queueattr.Property(a) + "}=\"...\" in a rule and let the iosched rules write it"})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Attr < out[j].Attr })
	return out
}

// runWrites lists the freezing queue attributes a RUN command seems to
// write: it names queue/ATTR and redirects or tees.
func runWrites(cmd string) []string {
	if !strings.Contains(cmd, ">") && !strings.Contains(cmd, "tee") {
		return nil
	}
	var out []string
	for _, a := range append([]string{queueattr.Scheduler}, queueattr.Names()...) {
		if queueattr.FreezeRanges(a) != nil && namesAttr(cmd, a) {
			out = append(out, a)
		}
	}
	return out
}

// namesAttr reports whether s names queue/attr as a whole word.
func namesAttr(s, attr string) bool {
	w := "queue/" + attr
	for i := strings.Index(s, w); i >= 0; {
		end := i + len(w)
		if end == len(s) || !isWordByte(s[end]) {
			return true
		}
		j := strings.Index(s[end:], w)
		if j < 0 {
			break
		}
		i = end + j
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// guardResult is what the conditions on an attribute do to its write.
type guardResult struct {
	stops bool   // a condition skips the write when the value is already there
	never string // a != guard that compares the scheduler line with a bare name
	other bool   // a condition on the current value that is neither
}

// guard reads the rule's conditions on ATTR{queue/attr} against a write
// of value. A "!=" pattern matching the value read back once it holds
// skips the unchanged write, as does an "==" pattern that does not match
// it. The scheduler reads back as the whole bracketed line.
func guard(keys []key, attr, value string) guardResult {
	var g guardResult
	for _, k := range keys {
		if a, dev, ok := queueAttr(k.attr); k.name != "ATTR" || !ok || dev != "" || a != attr || !k.match() {
			continue
		}
		if strings.ContainsAny(value, "$%") {
			g.stops = true // substituted at event time: cannot tell
			continue
		}
		holds := false
		for _, v := range readsBack(attr, value) {
			holds = holds || globMatch(k.value, v, k.fold)
		}
		switch {
		case k.op == "!=" && attr == queueattr.Scheduler && globMatch(k.value, value, k.fold):
			g.never = k.original
		case attr == queueattr.Scheduler && !strings.ContainsAny(k.value, "*?["):
			// A whole line with no "[": only a disk with no choice
			// ("none") has it, and no write changes that. The guard
			// stays where it is and keeps its meaning.
		case k.op == "!=" && holds, k.op == "==" && !holds:
			g.stops = true
		default:
			g.other = true
		}
	}
	return g
}

// readsBack returns what the attribute can read once value is written.
func readsBack(attr, value string) []string {
	if attr != queueattr.Scheduler {
		return []string{value}
	}
	b := "[" + value + "]"
	return []string{b, b + " none", "none " + b, "mq-deadline " + b + " none", "none " + b + " kyber"}
}

// Replacement is the rule as `iosched audit --fix` converts it: each
// ATTR{queue/} write of an attribute iosched knows becomes the property
// the iosched rules act on (IOSCHED_SCHEDULER with MarkerProperty,
// IOSCHED_ATTR_*, IOSCHED_TUNE_*), the guards on those attributes go
// (iosched compares first), every other key stays as written.
func Replacement(keys []key) string {
	converted := map[string]string{}
	for _, k := range keys {
		if attr, ok := queueWrite(k); ok && known(attr) {
			converted[attr] = k.value
		}
	}
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if attr, ok := queueWrite(k); ok && known(attr) {
			parts = append(parts, propertyText(k, attr))
			continue
		}
		if !isConvertedGuard(k, converted) {
			parts = append(parts, k.original)
		}
	}
	return strings.Join(parts, ", ")
}

// propertyText is the property assignment that replaces the write k of
// attr; "noop" is "none" (schedValue).
func propertyText(k key, attr string) string {
	text := "ENV{" + queueattr.Property(attr) + "}=" + assignValue(k)
	if v := schedValue(attr, k.value); v != k.value {
		text = "ENV{" + queueattr.Property(attr) + "}=\"" + v + "\""
	}
	if attr == queueattr.Scheduler {
		text += ", ENV{" + MarkerProperty + "}=\"1\""
	}
	return text
}

// assignValue is the key's value as written, without the i prefix, which
// only a match takes.
func assignValue(k key) string {
	q := strings.IndexByte(k.raw, '"')
	return strings.ReplaceAll(k.raw[:q], "i", "") + k.raw[q:]
}
