// Package rulesaudit finds udev rules that write a queue attribute whose
// every write freezes the queue, on change events: udev synthesises a
// change event each time a process closes a disk it had open for writing,
// so such a rule freezes the queue again and again for nothing.
package rulesaudit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/iosched/iosched/helper/queueattr"
)

// Dirs are udev's rules directories in precedence order: a file in an
// earlier directory masks a file of the same name in a later one
// (systemd's udev(7), RULES FILES).
var Dirs = []string{"/etc/udev/rules.d", "/run/udev/rules.d", "/usr/local/lib/udev/rules.d", "/usr/lib/udev/rules.d", "/lib/udev/rules.d"}

// Finding is one write of a freezing attribute on change events.
type Finding struct {
	File    string
	Line    int
	Attr    string // queue attribute, e.g. "scheduler"
	Value   string
	ViaRUN  bool   // written by a RUN program rather than ATTR{}
	Replace string // the iosched rule that replaces it
}

func (f Finding) String() string {
	how := "ATTR{queue/" + f.Attr + "} is written"
	if f.ViaRUN {
		how = "a RUN program writes queue/" + f.Attr
	}
	return fmt.Sprintf("%s:%d: %s on change events: every event freezes the queue\n    replace with: %s",
		f.File, f.Line, how, f.Replace)
}

// RulesFiles lists the *.rules files of dirs as udev reads them: sorted by
// file name across all directories, a name in an earlier directory masking
// the same name in later ones. Missing directories are skipped.
func RulesFiles(dirs []string) ([]string, error) {
	byName := map[string]string{}
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list rules in %s: %w", d, err)
		}
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".rules") {
				continue
			}
			if _, masked := byName[e.Name()]; !masked {
				byName[e.Name()] = filepath.Join(d, e.Name())
			}
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	files := make([]string, 0, len(names))
	for _, n := range names {
		files = append(files, byName[n])
	}
	return files, nil
}

// File audits one rules file.
func File(path string) ([]Finding, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit %s: %w", path, err)
	}
	defer f.Close()
	found, err := Audit(path, f)
	if err != nil {
		return nil, fmt.Errorf("audit %s: %w", path, err)
	}
	return found, nil
}

// freezing is the set of queue attributes a write of which freezes.
var freezing = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range queueattr.FreezingNames() {
		m[n] = true
	}
	return m
}()

// Audit reads rules from r; name is used in findings.
func Audit(name string, r io.Reader) ([]Finding, error) {
	var found []Finding
	skipTo := "" // a GOTO taken by change events: skip to this LABEL
	err := eachRule(r, func(line int, keys []key) {
		if skipTo != "" {
			for _, k := range keys {
				if k.name == "LABEL" && k.value == skipTo {
					skipTo = ""
				}
			}
			return
		}
		if !onChange(keys) {
			return
		}
		if label, ok := jumpsOnChange(keys); ok {
			skipTo = label
			return
		}
		found = append(found, writes(name, line, keys)...)
	})
	return found, err
}

// key is one KEY{attr}OP"value" of a rule.
type key struct {
	name, attr, op, value string
}

func (k key) match() bool { return k.op == "==" || k.op == "!=" }

// onChange reports whether the rule's ACTION conditions let a change
// event through; a rule without any does.
func onChange(keys []key) bool {
	for _, k := range keys {
		if k.name != "ACTION" || !k.match() {
			continue
		}
		if globMatch(k.value, "change") != (k.op == "==") {
			return false
		}
	}
	return true
}

// jumpsOnChange reports a GOTO that change events on block disks surely
// take: the rule's only conditions are on ACTION (already known to pass)
// and on SUBSYSTEM, which is "block" here. Any other condition might not
// hold, so the jump is not assumed and the rules after it are audited.
func jumpsOnChange(keys []key) (string, bool) {
	label := ""
	for _, k := range keys {
		switch {
		case k.name == "GOTO":
			label = k.value
		case k.name == "ACTION":
		case k.name == "SUBSYSTEM" && k.match():
			if globMatch(k.value, "block") != (k.op == "==") {
				return "", false
			}
		case k.match():
			return "", false
		}
	}
	return label, label != ""
}

// writes returns the freezing writes of one rule that no condition on the
// same attribute guards.
func writes(file string, line int, keys []key) []Finding {
	guarded := map[string]bool{}
	for _, k := range keys {
		if k.name == "ATTR" && k.match() {
			guarded[strings.TrimPrefix(k.attr, "queue/")] = true
		}
	}
	isWrite := func(k key) bool {
		attr, isQueue := strings.CutPrefix(k.attr, "queue/")
		return k.name == "ATTR" && isQueue && (k.op == "=" || k.op == ":=") && freezing[attr] && !guarded[attr]
	}
	var out []Finding
	for _, k := range keys {
		attr := strings.TrimPrefix(k.attr, "queue/")
		switch {
		case isWrite(k):
			out = append(out, Finding{File: file, Line: line, Attr: attr, Value: k.value, Replace: replacement(keys, isWrite)})
		case k.name == "RUN" && !k.match():
			for a := range freezing {
				if strings.Contains(k.value, "queue/"+a) && (strings.Contains(k.value, ">") || strings.Contains(k.value, "tee")) {
					out = append(out, Finding{File: file, Line: line, Attr: a, ViaRUN: true,
						Replace: "set ENV{" + queueattr.Property(a) + "}=\"...\" in a rule and let the iosched rules write it"})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Attr < out[j].Attr })
	return out
}

// replacement rewrites the rule: each freezing ATTR{} write becomes the
// property the iosched rules act on, keeping every other key.
func replacement(keys []key, isWrite func(key) bool) string {
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if isWrite(k) {
			parts = append(parts, fmt.Sprintf("ENV{%s}=%q", queueattr.Property(strings.TrimPrefix(k.attr, "queue/")), k.value))
			continue
		}
		name := k.name
		if k.attr != "" {
			name += "{" + k.attr + "}"
		}
		parts = append(parts, fmt.Sprintf("%s%s%q", name, k.op, k.value))
	}
	return strings.Join(parts, ", ")
}

// globMatch matches a udev pattern: '|' separates alternatives, each a
// shell glob (fnmatch).
func globMatch(pattern, s string) bool {
	for _, alt := range strings.Split(pattern, "|") {
		if ok, err := filepath.Match(alt, s); err == nil && ok {
			return true
		}
	}
	return false
}

// eachRule calls fn for each rule of r with the line it starts on.
// Lines ending in a backslash continue on the next line; '#' starts a
// comment line.
func eachRule(r io.Reader, fn func(line int, keys []key)) error {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	var buf strings.Builder
	n, start := 0, 0
	for s.Scan() {
		n++
		text := s.Text()
		if buf.Len() == 0 {
			start = n
			if t := strings.TrimSpace(text); t == "" || strings.HasPrefix(t, "#") {
				continue
			}
		}
		if strings.HasSuffix(text, "\\") {
			buf.WriteString(strings.TrimSuffix(text, "\\"))
			continue
		}
		buf.WriteString(text)
		if keys, err := parseRule(buf.String()); err == nil {
			fn(start, keys)
		}
		buf.Reset()
	}
	return s.Err()
}

// parseRule splits `KEY{attr}=="v", KEY="v"` into keys. udev skips a rule
// it cannot parse, and so does this.
func parseRule(s string) ([]key, error) {
	var keys []key
	for {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return keys, nil
		}
		var k key
		i := strings.IndexAny(s, "{=!+-:")
		if i <= 0 {
			return nil, fmt.Errorf("no operator in %q", s)
		}
		k.name, s = strings.TrimSpace(s[:i]), s[i:]
		if strings.HasPrefix(s, "{") {
			j := strings.IndexByte(s, '}')
			if j < 0 {
				return nil, fmt.Errorf("unclosed { in %q", s)
			}
			k.attr, s = s[1:j], s[j+1:]
		}
		s = strings.TrimLeft(s, " \t")
		for _, op := range []string{"==", "!=", "+=", "-=", ":=", "="} {
			if strings.HasPrefix(s, op) {
				k.op, s = op, s[len(op):]
				break
			}
		}
		if k.op == "" {
			return nil, fmt.Errorf("no operator after %s", k.name)
		}
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, "\"") {
			return nil, fmt.Errorf("value of %s not quoted", k.name)
		}
		var v strings.Builder
		j := 1
		for ; j < len(s) && s[j] != '"'; j++ {
			if s[j] == '\\' && j+1 < len(s) && s[j+1] == '"' {
				j++
			}
			v.WriteByte(s[j])
		}
		if j >= len(s) {
			return nil, fmt.Errorf("unterminated value of %s", k.name)
		}
		k.value, s = v.String(), s[j+1:]
		keys = append(keys, k)
	}
}
