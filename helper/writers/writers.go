// Package writers finds the places besides udev's ATTR{} rules that
// write block queue attributes at boot without comparing first, which
// users set up once and forget: systemd-tmpfiles `w` lines, sysfsutils,
// tuned's disk plugin, TLP's DISK_IOSCHED, and the programs udev rules
// RUN that echo into queue files. Each such write freezes the queue, and
// each one fights the udev policy whenever it disagrees.
package writers

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/rulesaudit"
)

// Kinds of writer.
const (
	Tmpfiles   = "systemd-tmpfiles"
	Sysfsutils = "sysfsutils"
	Tuned      = "tuned"
	TLP        = "TLP"
	RunProgram = "udev RUN program"
)

// Writer is one configured write of a queue attribute.
type Writer struct {
	Kind  string
	File  string // as on the system (root stripped)
	Line  int
	Disk  string // the disk or pattern it names; "" for every disk
	Attr  string // queue attribute, e.g. "scheduler", "read_ahead_kb"
	Value string
	Note  string // e.g. the active tuned profile, the rule that runs the program
	// Included: a tuned option of a profile the active one includes,
	// not of the active profile itself.
	Included bool
	// Conditional says when a write that compares first happens (tuned's
	// ">" and "<" values); "" for a write on every start.
	Conditional string
}

// ConfiguredFor reports whether w's disk list names disk: empty means
// every disk; else names or globs separated by commas or spaces, "!"
// excluding (tuned's devices=, TLP's DISK_DEVICES, a tmpfiles path).
func (w Writer) ConfiguredFor(disk string) bool {
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

// Advice says what to do with w: the udev property that replaces it.
func (w Writer) Advice() string {
	prop := queueattr.Property(w.Attr)
	switch w.Kind {
	case Tuned:
		return fmt.Sprintf("drop %s from the profile's [disk] section and set ENV{%s} in a udev rule: tuned writes it on every start and profile switch", tunedKey(w.Attr), prop)
	case TLP:
		return fmt.Sprintf("set DISK_IOSCHED to keep for these disks and ENV{%s} in a udev rule: TLP writes it on every start and power-source change", prop)
	case RunProgram:
		return fmt.Sprintf("set ENV{%s}=\"...\" in the rule instead of running the program", prop)
	}
	return fmt.Sprintf("remove the line and set ENV{%s}=\"%s\" in a udev rule for the disk: iosched writes only what would change", prop, w.Value)
}

func (w Writer) String() string {
	disk := w.Disk
	if disk == "" {
		disk = "every disk"
	}
	what := fmt.Sprintf("queue/%s=%q", w.Attr, w.Value)
	if w.Value == "" {
		what = "queue/" + w.Attr
	}
	how := "without comparing first"
	if w.Conditional != "" {
		how = w.Conditional
	}
	s := fmt.Sprintf("%s:%d: %s writes %s on %s at boot, %s", w.File, w.Line, w.Kind, what, disk, how)
	if w.Note != "" {
		s += " (" + w.Note + ")"
	}
	return s + "\n    " + w.Advice()
}

// Find returns every writer configured under the filesystem root root
// ("/" on the system), sorted by file and line. A file it cannot read is
// an error naming it; the others are still returned.
func Find(root string) ([]Writer, error) {
	var out []Writer
	var errs []error
	for _, find := range []func(string) ([]Writer, error){findTmpfiles, findSysfsutils, findTuned, findTLP, findRunPrograms} {
		w, err := find(root)
		out = append(out, w...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, errors.Join(errs...)
}

// readLines reads root+path; a missing file is no lines.
func readLines(root, path string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(root, path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return lines, nil
}

// confFiles lists NAME.suffix files across dirs as systemd's conf-files
// logic does: by name, an earlier directory's file masking a later one's,
// a link to /dev/null or an empty file masking and read as nothing.
func confFiles(root string, dirs []string, suffix string) ([]string, error) {
	byName := map[string]string{}
	var errs []error
	for _, d := range dirs {
		ents, err := os.ReadDir(filepath.Join(root, d))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("list %s: %w", d, err))
			continue
		}
		for _, e := range ents {
			n := e.Name()
			if !strings.HasSuffix(n, suffix) || strings.HasPrefix(n, ".") {
				continue
			}
			if _, seen := byName[n]; !seen {
				byName[n] = filepath.Join(d, n)
			}
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		p := byName[n]
		fi, err := os.Stat(filepath.Join(root, p))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
			continue // masked, dangling or not a file: nothing read
		}
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

// queuePath splits a sysfs path (absolute, or relative to /sys) naming a
// disk's queue attribute into the disk and the attribute.
func queuePath(p string) (disk, attr string, ok bool) {
	p = strings.TrimPrefix(filepath.Clean("/"+p), "/")
	p = strings.TrimPrefix(p, "sys/")
	parts := strings.Split(p, "/")
	for i := 0; i+2 < len(parts); i++ {
		if parts[i+1] == "queue" && i > 0 && parts[i-1] == "block" {
			return parts[i], strings.Join(parts[i+2:], "/"), true
		}
	}
	return "", "", false
}

// findTmpfiles: `w` lines (and w+, with modifiers) whose path is a
// queue attribute (tmpfiles.d(5)).
func findTmpfiles(root string) ([]Writer, error) {
	files, err := confFiles(root, []string{"/etc/tmpfiles.d", "/run/tmpfiles.d", "/usr/local/lib/tmpfiles.d", "/usr/lib/tmpfiles.d"}, ".conf")
	var out []Writer
	errs := []error{err}
	for _, f := range files {
		lines, err := readLines(root, f)
		errs = append(errs, err)
		for i, l := range lines {
			fields, arg := tmpfilesFields(l)
			if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
				continue
			}
			typ := strings.TrimRight(fields[0], "!-=~^")
			if typ != "w" && typ != "w+" {
				continue
			}
			disk, attr, ok := queuePath(fields[1])
			if !ok {
				continue
			}
			out = append(out, Writer{Kind: Tmpfiles, File: f, Line: i + 1, Disk: disk, Attr: attr, Value: arg})
		}
	}
	return out, errors.Join(errs...)
}

// tmpfilesFields splits a tmpfiles.d line as systemd-tmpfiles does: six
// fields, each unquoted ("..." or '...') with C escapes, then the
// argument, the rest of the line after the whitespace before it.
func tmpfilesFields(l string) ([]string, string) {
	var fields []string
	i := 0
	for len(fields) < 6 {
		for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
			i++
		}
		if i >= len(l) {
			return fields, ""
		}
		var b strings.Builder
		var quote byte
		for ; i < len(l); i++ {
			c := l[i]
			switch {
			case quote == 0 && (c == ' ' || c == '\t'):
				goto done
			case c == '\\' && i+1 < len(l):
				i++
				b.WriteByte(unescape(l[i]))
			case quote == 0 && (c == '"' || c == '\''):
				quote = c
			case c == quote:
				quote = 0
			default:
				b.WriteByte(c)
			}
		}
	done:
		fields = append(fields, b.String())
	}
	for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	return fields, l[i:]
}

// unescape is the byte a C escape \c stands for; others stand for c.
func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	}
	return c
}

// findSysfsutils: "block/DISK/queue/ATTR = VALUE" lines of /etc/sysfs.conf
// and /etc/sysfs.d/*.conf (sysfs.conf(5)); mode and owner lines write no
// attribute.
func findSysfsutils(root string) ([]Writer, error) {
	files := []string{"/etc/sysfs.conf"}
	d, err := confFiles(root, []string{"/etc/sysfs.d"}, ".conf")
	files = append(files, d...)
	var out []Writer
	errs := []error{err}
	for _, f := range files {
		lines, err := readLines(root, f)
		errs = append(errs, err)
		for i, l := range lines {
			l = strings.TrimSpace(l)
			if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "mode ") || strings.HasPrefix(l, "owner ") {
				continue
			}
			k, v, ok := strings.Cut(l, "=")
			if !ok {
				continue
			}
			disk, attr, ok := queuePath(strings.TrimSpace(k))
			if !ok {
				continue
			}
			out = append(out, Writer{Kind: Sysfsutils, File: f, Line: i + 1, Disk: disk, Attr: attr, Value: strings.TrimSpace(v)})
		}
	}
	return out, errors.Join(errs...)
}

// tunedKey is the tuned disk plugin's option for a queue attribute.
func tunedKey(attr string) string {
	if attr == queueattr.Scheduler {
		return "elevator="
	}
	return "readahead="
}

// tunedDirs are where tuned looks for a profile, first found wins.
var tunedDirs = []string{"/etc/tuned/profiles", "/etc/tuned", "/usr/lib/tuned/profiles", "/usr/lib/tuned"}

// findTuned: the elevator= and readahead= of [disk] sections (or any
// section with type=disk) of the profiles tuned applies: those named in
// /etc/tuned/active_profile and, before each, the include= chain of its
// [main] section, a later profile's option replacing an earlier one's
// (tuned.conf(5)). No active_profile: tuned applies none.
func findTuned(root string) ([]Writer, error) {
	lines, err := readLines(root, "/etc/tuned/active_profile")
	if err != nil {
		return nil, err
	}
	var active []string
	for _, l := range lines {
		active = append(active, strings.Fields(l)...)
	}
	var errs []error
	merged := map[string]int{} // section/attr: index in out
	var out []Writer
	loaded := map[string]bool{}
	var load func(name, note string, depth int)
	load = func(name, note string, depth int) {
		if loaded[name] || depth > 32 {
			return
		}
		loaded[name] = true
		conf := ""
		for _, d := range tunedDirs {
			c := filepath.Join(d, name, "tuned.conf")
			if _, err := os.Stat(filepath.Join(root, c)); err == nil {
				conf = c
				break
			}
		}
		if conf == "" {
			errs = append(errs, fmt.Errorf("tuned profile %q: no %s in %s", name, filepath.Join(name, "tuned.conf"), strings.Join(tunedDirs, ", ")))
			return
		}
		lines, err := readLines(root, conf)
		if err != nil {
			errs = append(errs, err)
			return
		}
		for _, inc := range tunedIncludes(lines) {
			load(inc, "profile "+inc+", included by "+name, depth+1)
		}
		for _, tw := range tunedWriters(conf, lines, note) {
			tw.w.Included = depth > 0
			k := tw.sect + "/" + tw.w.Attr
			if i, ok := merged[k]; ok {
				out[i] = tw.w
				continue
			}
			merged[k] = len(out)
			out = append(out, tw.w)
		}
	}
	for _, name := range active {
		load(name, "the active profile, "+name, 0)
	}
	return out, errors.Join(errs...)
}

// tunedIncludes is the include= of a profile's [main] section: names
// separated by commas or spaces.
func tunedIncludes(lines []string) []string {
	sect := ""
	var out []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			sect = l[1 : len(l)-1]
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if ok && sect == "main" && strings.TrimSpace(k) == "include" {
			out = strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		}
	}
	return out
}

type tunedWrite struct {
	w    Writer
	sect string
}

func tunedWriters(conf string, lines []string, note string) []tunedWrite {
	type pending = tunedWrite
	var out []tunedWrite
	var ws []pending
	isDisk := map[string]bool{}
	devices := map[string]string{}
	sect := ""
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			sect = l[1 : len(l)-1]
			if sect == "disk" {
				isDisk[sect] = true
			}
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "type":
			isDisk[sect] = v == "disk"
		case "devices":
			devices[sect] = v
		case "elevator":
			ws = append(ws, pending{Writer{Kind: Tuned, File: conf, Line: i + 1, Attr: queueattr.Scheduler, Value: v, Note: note}, sect})
		case "readahead":
			ws = append(ws, pending{Writer{Kind: Tuned, File: conf, Line: i + 1, Attr: "read_ahead_kb", Value: v, Note: note}, sect})
		}
	}
	for _, p := range ws {
		if isDisk[p.sect] {
			p.w.Disk = devices[p.sect]
			// tuned's ">" and "<" write only when the value would
			// rise or fall (plugins/base.py, assignment modifiers).
			switch {
			case strings.HasPrefix(p.w.Value, ">"):
				p.w.Conditional = "only when the current value is lower (tuned compares first)"
			case strings.HasPrefix(p.w.Value, "<"):
				p.w.Conditional = "only when the current value is higher (tuned compares first)"
			}
			out = append(out, p)
		}
	}
	return out
}

// findTLP: DISK_IOSCHED as TLP reads it (tlp(8)): /etc/tlp.d/*.conf in
// order, then /etc/tlp.conf, which overrides them (the older
// /etc/default/tlp when neither exists), the last assignment of each
// variable winning; its entries pair with DISK_DEVICES' by position
// (default "nvme0n1 sda"), so a disk with no entry, or "keep", gets no
// write.
func findTLP(root string) ([]Writer, error) {
	d, err := confFiles(root, []string{"/etc/tlp.d"}, ".conf")
	files := append(d, "/etc/tlp.conf")
	if _, serr := os.Stat(filepath.Join(root, "/etc/tlp.conf")); serr != nil && len(d) == 0 {
		files = []string{"/etc/default/tlp"}
	}
	errs := []error{err}
	type setting struct {
		file  string
		line  int
		value string
	}
	var devices, iosched setting
	devices.value = "nvme0n1 sda" // TLP's default DISK_DEVICES
	for _, f := range files {
		lines, err := readLines(root, f)
		errs = append(errs, err)
		for i, l := range lines {
			l = strings.TrimSpace(l)
			k, v, ok := strings.Cut(l, "=")
			if !ok || strings.HasPrefix(l, "#") {
				continue
			}
			v = strings.Trim(strings.TrimSpace(v), `"'`)
			switch strings.TrimSpace(k) {
			case "DISK_DEVICES":
				devices = setting{f, i + 1, v}
			case "DISK_IOSCHED":
				iosched = setting{f, i + 1, v}
			}
		}
	}
	var out []Writer
	scheds := strings.Fields(iosched.value)
	for i, dev := range strings.Fields(devices.value) {
		if i >= len(scheds) || scheds[i] == "keep" {
			continue
		}
		out = append(out, Writer{Kind: TLP, File: iosched.file, Line: iosched.line, Disk: dev, Attr: queueattr.Scheduler, Value: scheds[i]})
	}
	return out, errors.Join(errs...)
}

// maxScript bounds what findRunPrograms reads of one program: scripts
// are small, and a binary is not read at all.
const maxScript = 256 << 10

// findRunPrograms: the programs that RUN keys of the rules udevd reads
// start on add or change, when they are scripts that write a queue
// attribute (a line naming queue/ATTR with a redirection or tee). A RUN
// key whose own command line writes is rulesaudit's finding, not this.
func findRunPrograms(root string) ([]Writer, error) {
	dirs := make([]string, len(rulesaudit.Dirs))
	for i, d := range rulesaudit.Dirs {
		dirs[i] = filepath.Join(root, d)
	}
	var out []Writer
	var errs []error
	seen := map[string]bool{}
	for _, rf := range rulesaudit.List(dirs).Files {
		runs, err := rulesaudit.RunCommands(rf)
		if err != nil {
			continue // audit reports the rules files it cannot read
		}
		for _, r := range runs {
			fields := strings.Fields(r.Command)
			if len(fields) == 0 {
				continue
			}
			prog := fields[0]
			if !strings.HasPrefix(prog, "/") {
				prog = "/usr/lib/udev/" + prog
			}
			if seen[prog] {
				continue
			}
			seen[prog] = true
			ws, err := scriptWrites(root, prog)
			if err != nil {
				errs = append(errs, err)
			}
			rel, _ := filepath.Rel(root, rf)
			for i := range ws {
				ws[i].Note = fmt.Sprintf("run by /%s:%d", rel, r.Line)
			}
			out = append(out, ws...)
		}
	}
	return out, errors.Join(errs...)
}

// scriptWrites reads a text program and returns its writes of queue
// attributes; a binary, or a program that is not there, has none.
func scriptWrites(root, prog string) ([]Writer, error) {
	f, err := os.Open(filepath.Join(root, prog))
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil
	}
	buf := make([]byte, maxScript)
	n, err := f.Read(buf)
	if err != nil || bytes.IndexByte(buf[:n], 0) >= 0 {
		return nil, nil
	}
	var out []Writer
	for i, l := range strings.Split(string(buf[:n]), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") || !strings.Contains(l, ">") && !strings.Contains(l, "tee") {
			continue
		}
		for _, a := range append([]string{queueattr.Scheduler}, queueattr.Names()...) {
			if namesQueueAttr(l, a) {
				out = append(out, Writer{Kind: RunProgram, File: prog, Line: i + 1, Attr: a})
			}
		}
	}
	return out, nil
}

// namesQueueAttr reports whether s names queue/attr as a whole word.
func namesQueueAttr(s, attr string) bool {
	w := "queue/" + attr
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		end := i + j + len(w)
		if end == len(s) || !isWord(s[end]) {
			return true
		}
		i = end
	}
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
