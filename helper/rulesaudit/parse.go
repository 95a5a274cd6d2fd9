package rulesaudit

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxLine is systemd's UDEV_LINE_SIZE: udevd reads a rules file with
// read_line(f, UDEV_LINE_SIZE), which fails for a line that long, and
// stops reading the file there; a rule joined from continuation lines
// that reaches it is ignored on its own (udev-rules.c,
// udev_rules_parse_file). What happens to the rules read before the long
// line depends on the version: udev 252 (Debian 12) keeps them, without
// resolving the file's GOTOs (rule_resolve_goto is never reached, so
// every GOTO falls through); 257 (Debian 13) and 262 free the file's
// rules with it, skipping the whole file.
const maxLine = 16384

// ErrLineTooLong marks a file that udevd skips (257 and later) or reads
// only up to the long line (252).
var ErrLineTooLong = errors.New("line too long")

// key is one KEY{attr}OP"value" of a rule.
type key struct {
	name, attr, op, value string
	hasAttr               bool   // {attr} was given, perhaps empty
	raw                   string // the quoted value as written, with its prefix
	fold                  bool   // i"...": matched case-insensitively
	original              string // the whole key as written
	start, end            int    // where original lies in the rule's logical line
}

func (k key) match() bool { return k.op == "==" || k.op == "!=" }

// assign reports an assignment; udevd takes ATTR{}+= and ATTR{}:= as =
// (udev-rules.c parse_token: "assuming '='").
func (k key) assign() bool {
	return k.op == "=" || k.op == ":=" || k.name == "ATTR" && k.op == "+="
}

// seg maps part of a rule's logical line (continuations joined) back to
// the file: n bytes at logical offset at come from file offset off.
type seg struct{ at, off, n int }

// rule is one logical line of a rules file: its keys, the lines it
// spans and where each part of it lies in the file.
type rule struct {
	line, end int // first and last line
	keys      []key
	segs      []seg
}

// span returns the file offsets of k, false when k spans a continuation.
func (r rule) span(k key) (int, int, bool) {
	for _, s := range r.segs {
		if k.start >= s.at && k.end <= s.at+s.n {
			return s.off + k.start - s.at, s.off + k.end - s.at, true
		}
	}
	return 0, 0, false
}

// label returns the rule's LABEL, or "": the last one, as udevd keeps
// the last of several (udev-rules.c, parse_token: "Contains multiple
// LABEL keys, ignoring" the one before).
func (r rule) label() string {
	l := ""
	for _, k := range r.keys {
		if k.name == "LABEL" {
			l = k.value
		}
	}
	return l
}

// gotoLabel returns the rule's GOTO target, or "": the first one, as
// udevd ignores the GOTOs after it.
func (r rule) gotoLabel() string {
	for _, k := range r.keys {
		if k.name == "GOTO" {
			return k.value
		}
	}
	return ""
}

// physLine is one line of a file as udevd's read_line() ends it.
type physLine struct {
	text string
	off  int // file offset of text
}

// splitPhys ends lines where udevd's read_line() does (fileio.c,
// read_line_full): at "\n", "\r" or NUL, a run of end markers of
// different kinds ("\r\n", "\n\r", "\r\n\0", ...) ending one line, a
// marker seen twice ("\n\n") or anything after a NUL starting the next.
// So a lone "\r" or NUL inside a line ends it there.
func splitPhys(data string) []physLine {
	const zero = 1
	eol := func(c byte) int {
		switch c {
		case 0:
			return zero
		case '\n':
			return 2
		case '\r':
			return 4
		}
		return 0
	}
	var out []physLine
	for i := 0; i < len(data); {
		j := i
		for j < len(data) && eol(data[j]) == 0 {
			j++
		}
		out = append(out, physLine{data[i:j], i})
		prev := 0
		for ; j < len(data); j++ {
			e := eol(data[j])
			if prev&zero != 0 || e == 0 || prev&e != 0 {
				break
			}
			prev |= e
		}
		i = j
	}
	return out
}

// readRules splits r into rules as udevd does: leading whitespace is
// skipped, a line starting with '#' is ignored even inside a
// continuation, a trailing backslash joins the next line, and a rule
// udevd cannot parse is dropped.
func readRules(r io.Reader) ([]rule, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return parseRules(string(data))
}

// dialect is the udev version whose reading parseRulesAs follows where
// versions differ (the corpus in testdata/udevd shows where, against
// each version's `udevadm test`).
type dialect int

const (
	udevCurrent dialect = iota // udev 257 (Debian 13) and 262
	udev252                    // udev 252 (Debian 12): no i"..." prefix, a value so written drops its line
)

// parseRules reads data as udev 257 and later do.
func parseRules(data string) ([]rule, error) { return parseRulesAs(data, udevCurrent) }

// parseRulesAs reads data as udev of dialect d does.
func parseRulesAs(data string, d dialect) ([]rule, error) {
	lines := splitPhys(data)
	var rules []rule
	var cont strings.Builder
	var segs []seg
	inCont, ignore := false, false
	start := 0
	for i, pl := range lines {
		raw := pl.text
		if len(raw) >= maxLine {
			return rules, fmt.Errorf("line %d: %w (%d bytes, udevd's limit is %d): udevd 257 and later skip the whole file",
				i+1, ErrLineTooLong, len(raw), maxLine-1)
		}
		if !inCont {
			start = i + 1
			segs = nil
		}
		trimmed := strings.TrimLeft(raw, " \t")
		off := pl.off + len(raw) - len(trimmed)
		line := trimmed
		if strings.HasPrefix(line, "#") {
			continue
		}
		if inCont && !ignore {
			if cont.Len()+len(line) >= maxLine {
				ignore = true
			}
			segs = append(segs, seg{cont.Len(), off, len(line)})
			cont.WriteString(line)
			if !ignore {
				line = cont.String()
			}
		} else if !inCont {
			segs = []seg{{0, off, len(line)}}
		}
		if strings.HasSuffix(line, "\\") {
			if ignore {
				continue
			}
			line = line[:len(line)-1]
			segs[len(segs)-1].n--
			cont.Reset()
			cont.WriteString(line)
			inCont = true
			continue
		}
		if !ignore && line != "" {
			if keys, err := parseRuleAs(line, d); err == nil && len(keys) > 0 {
				rules = append(rules, rule{line: start, end: i + 1, keys: keys, segs: segs})
			}
		}
		cont.Reset()
		inCont, ignore = false, false
	}
	return rules, nil
}

// parseRule splits `KEY{attr}=="v", KEY="v"` into keys. udev skips a rule
// it cannot parse, and so does this.
func parseRule(s string) ([]key, error) { return parseRuleAs(s, udevCurrent) }

// parseRuleAs is parseRule as udev of dialect d reads the line.
func parseRuleAs(s string, d dialect) ([]key, error) {
	full := s
	var keys []key
	for {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return keys, nil
		}
		rest := s
		var k key
		k.start = len(full) - len(s)
		i := strings.IndexAny(s, "{=!+-: \t")
		if i <= 0 {
			return nil, fmt.Errorf("no operator in %q", s)
		}
		k.name, s = s[:i], s[i:]
		if strings.HasPrefix(s, "{") {
			j := strings.IndexByte(s, '}')
			if j < 0 {
				return nil, fmt.Errorf("unclosed { in %q", s)
			}
			k.attr, s = s[1:j], s[j+1:]
			k.hasAttr = true
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
		if k.name == "ATTR" && k.op == "-=" {
			// udevd rejects the key and drops the whole line.
			return nil, fmt.Errorf("ATTR takes no -=")
		}
		s = strings.TrimLeft(s, " \t")
		v, n, fold, err := parseValue(s)
		if err != nil {
			return nil, fmt.Errorf("value of %s: %w", k.name, err)
		}
		if fold && d == udev252 {
			// 252's udev_rule_parse_value takes only the e prefix.
			return nil, fmt.Errorf("value of %s: udev 252 has no i prefix", k.name)
		}
		k.value, k.fold, k.raw = v, fold, s[:n]
		k.original = rest[:len(rest)-len(s)+n]
		k.end = k.start + len(k.original)
		s = s[n:]
		if err := checkKey(k); err != nil {
			// udevd drops the whole line (udev-rules.c, rule_add_line).
			return nil, fmt.Errorf("%s: %w", k.original, err)
		}
		keys = append(keys, k)
	}
}

// Keys as udevd's parse_token() (udev-rules.c, v252 to v262) takes them:
// a key it does not know, in any other case, drops the line.
var (
	matchOnly  = set("ACTION", "DEVPATH", "KERNEL", "CONST", "SUBSYSTEM", "DRIVER", "KERNELS", "SUBSYSTEMS", "DRIVERS", "ATTRS", "TAGS", "TEST", "RESULT")
	assignOnly = set("OPTIONS", "OWNER", "GROUP", "MODE", "SECLABEL", "RUN", "GOTO", "LABEL")
	noRemove   = set("NAME", "ENV", "ATTR", "SYSCTL", "PROGRAM", "IMPORT", "OPTIONS", "OWNER", "GROUP", "MODE", "SECLABEL", "RUN")
	otherKeys  = set("SYMLINK", "NAME", "ENV", "TAG", "ATTR", "SYSCTL", "PROGRAM", "IMPORT")
	// Keys that take no {attr}, not even an empty one.
	noAttr = set("ACTION", "DEVPATH", "KERNEL", "SYMLINK", "NAME", "TAG", "SUBSYSTEM", "DRIVER", "KERNELS", "SUBSYSTEMS", "DRIVERS", "TAGS", "PROGRAM", "RESULT", "OPTIONS", "OWNER", "GROUP", "MODE", "GOTO", "LABEL")
	// Keys that need a non-empty {attr}, and the ones they allow where
	// udevd keeps a list.
	needAttr  = set("ENV", "CONST", "ATTR", "SYSCTL", "ATTRS", "IMPORT", "SECLABEL")
	attrNames = map[string]map[string]bool{
		"CONST":  set("arch", "virt"),
		"IMPORT": set("file", "program", "builtin", "db", "cmdline", "parent"),
		"RUN":    set("program", "builtin"),
	}
	// log_level_from_string's names, and "reset" (OPTIONS="log_level=").
	logLevels = set("emerg", "alert", "crit", "err", "warning", "notice", "info", "debug", "reset", "0", "1", "2", "3", "4", "5", "6", "7")
	// ENV{} names udevd will not set (device_property_can_set).
	fixedProperties = set("ACTION", "DEVLINKS", "DEVNAME", "DEVPATH", "DEVTYPE", "DRIVER", "IFINDEX", "MAJOR", "MINOR", "SEQNUM", "SUBSYSTEM", "TAGS")
)

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// checkKey is the error for which udevd rejects k, or nil.
func checkKey(k key) error {
	switch {
	case !matchOnly[k.name] && !assignOnly[k.name] && !otherKeys[k.name]:
		return fmt.Errorf("unknown key %q", k.name)
	case k.fold && !k.match():
		return fmt.Errorf("the i prefix goes only with == or !=")
	case matchOnly[k.name] && !k.match():
		return fmt.Errorf("%s takes only == or !=", k.name)
	case assignOnly[k.name] && k.match():
		return fmt.Errorf("%s takes no == or !=", k.name)
	case noRemove[k.name] && k.op == "-=":
		return fmt.Errorf("%s takes no -=", k.name)
	case (k.name == "GOTO" || k.name == "LABEL") && k.op != "=":
		return fmt.Errorf("%s takes only =", k.name)
	case noAttr[k.name] && k.hasAttr:
		return fmt.Errorf("%s takes no {attr}", k.name)
	case needAttr[k.name] && k.attr == "":
		return fmt.Errorf("%s needs a {name}", k.name)
	case attrNames[k.name] != nil && k.hasAttr && !attrNames[k.name][k.attr]:
		return fmt.Errorf("%s{%s}: not a kind udevd knows", k.name, k.attr)
	case k.name == "NAME" && !k.match() && (k.value == "%k" || k.value == ""):
		return fmt.Errorf("NAME=%q: udevd ignores the line", k.value)
	case k.name == "OPTIONS" && strings.HasPrefix(k.value, "link_priority="):
		if !cInt(strings.TrimPrefix(k.value, "link_priority=")) {
			return fmt.Errorf("OPTIONS=%q: not a number", k.value)
		}
	case k.name == "OPTIONS" && strings.HasPrefix(k.value, "log_level=") && !logLevels[strings.TrimPrefix(k.value, "log_level=")]:
		return fmt.Errorf("OPTIONS=%q: not a log level", k.value)
	case k.name == "ENV" && !k.match() && fixedProperties[k.attr]:
		return fmt.Errorf("ENV{%s} cannot be set", k.attr)
	case k.fold && (k.name == "TEST" || k.name == "PROGRAM" || k.name == "IMPORT"):
		return fmt.Errorf("%s takes no i prefix", k.name)
	case k.name == "TEST" && k.attr != "":
		if m, err := strconv.ParseUint(k.attr, 8, 32); err != nil || m > 0o7777 {
			return fmt.Errorf("TEST{%s}: not a file mode", k.attr)
		}
	}
	return nil
}

// cInt reports whether systemd's safe_atoi takes s, as the corpus shows
// (options-link-priority-*.rules): an optional sign, then decimal, or
// hexadecimal, octal or binary after 0x, 0, 0o or 0b ("08" is no
// number), in range of an int: Go's base 0 without its underscores.
func cInt(s string) bool {
	_, err := strconv.ParseInt(s, 0, 32)
	return err == nil && !strings.Contains(s, "_")
}

// parseValue reads a quoted value with udev's optional prefixes
// (udev_rule_parse_value): e"..." takes C escapes, i"..." matches
// case-insensitively, both may be given once each; in a plain value only
// \" is an escape. It returns the value, the bytes read and the i flag.
func parseValue(s string) (string, int, bool, error) {
	escaped, fold := false, false
	p := 0
	for ; p < len(s) && p < 2 && s[p] != '"'; p++ {
		switch {
		case s[p] == 'e' && !escaped:
			escaped = true
		case s[p] == 'i' && !fold:
			fold = true
		default:
			return "", 0, false, fmt.Errorf("not quoted")
		}
	}
	if p >= len(s) || s[p] != '"' {
		return "", 0, false, fmt.Errorf("not quoted")
	}
	j := p + 1
	var v strings.Builder
	for ; j < len(s) && s[j] != '"'; j++ {
		if s[j] == '\\' && j+1 < len(s) && (escaped || s[j+1] == '"') {
			if !escaped {
				j++
			} else {
				v.WriteByte(s[j])
				j++
			}
		}
		v.WriteByte(s[j])
	}
	if j >= len(s) {
		return "", 0, false, fmt.Errorf("unterminated")
	}
	if !escaped {
		return v.String(), j + 1, fold, nil
	}
	u, err := unescapeC(v.String())
	if err != nil {
		return "", 0, false, err
	}
	return u, j + 1, fold, nil
}

// unescapeC undoes the C escapes of an e"..." value (systemd's
// cunescape): \a \b \f \n \r \t \v \s \\ \" \' \xHH, \OOO octal and
// \uHHHH, \UHHHHHHHH code points.
func unescapeC(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		i++
		if i >= len(s) {
			return "", fmt.Errorf("trailing backslash")
		}
		switch c := s[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '"', '\'':
			b.WriteByte(c)
		case 's':
			b.WriteByte(' ')
		case 'u', 'U':
			// A code point, 4 or 8 hex digits, in UTF-8 (cunescape_one).
			n := 4
			if c == 'U' {
				n = 8
			}
			if i+n >= len(s) {
				return "", fmt.Errorf("short \\%c escape", c)
			}
			r, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil || r == 0 || !utf8.ValidRune(rune(r)) {
				return "", fmt.Errorf("bad \\%c escape %q", c, s[i-1:i+1+n])
			}
			b.WriteRune(rune(r))
			i += n
		case 'x':
			if i+2 >= len(s) {
				return "", fmt.Errorf("short \\x escape")
			}
			n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil || n == 0 {
				return "", fmt.Errorf("bad \\x escape %q", s[i-1:i+3])
			}
			b.WriteByte(byte(n))
			i += 2
		case '0', '1', '2', '3':
			if i+2 >= len(s) {
				return "", fmt.Errorf("short octal escape")
			}
			n, err := strconv.ParseUint(s[i:i+3], 8, 8)
			if err != nil || n == 0 {
				return "", fmt.Errorf("bad octal escape %q", s[i-1:i+3])
			}
			b.WriteByte(byte(n))
			i += 2
		default:
			return "", fmt.Errorf("unknown escape \\%c", c)
		}
	}
	return b.String(), nil
}

// globMatch matches a udev pattern: '|' separates alternatives, each a
// shell glob (fnmatch); fold matches case-insensitively (the i prefix).
func globMatch(pattern, s string, fold bool) bool {
	if fold {
		pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	}
	for _, alt := range strings.Split(pattern, "|") {
		if fnmatch(alt, s) {
			return true
		}
	}
	return false
}

// fnmatch is fnmatch(3) with no flags, as udevd calls it: '*' and '?'
// match any byte, '/' too; a bracket expression may start with '!' or '^'
// and take ']' first; '\\' escapes; an unclosed '[' is a plain byte.
func fnmatch(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			if p == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if fnmatch(p, s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			p, s = p[1:], s[1:]
		case '[':
			if s == "" {
				return false
			}
			if ok, n, valid := matchClass(p, s[0]); valid {
				if !ok {
					return false
				}
				p, s = p[n:], s[1:]
				continue
			}
			if s[0] != '[' {
				return false
			}
			p, s = p[1:], s[1:]
		case '\\':
			if len(p) > 1 {
				p = p[1:]
			}
			fallthrough
		default:
			if s == "" || p[0] != s[0] {
				return false
			}
			p, s = p[1:], s[1:]
		}
	}
	return s == ""
}

// matchClass matches c against the bracket expression at the start of p:
// whether it matches, the pattern bytes it spans, and whether it is
// closed at all.
func matchClass(p string, c byte) (bool, int, bool) {
	i := 1
	negate := i < len(p) && (p[i] == '!' || p[i] == '^')
	if negate {
		i++
	}
	match := false
	for first := true; i < len(p); first = false {
		if p[i] == ']' && !first {
			return match != negate, i + 1, true
		}
		lo := p[i]
		if lo == '\\' && i+1 < len(p) {
			i++
			lo = p[i]
		}
		i++
		hi := lo
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			hi = p[i+1]
			if hi == '\\' && i+2 < len(p) {
				i++
				hi = p[i+1]
			}
			i += 2
		}
		if lo <= c && c <= hi {
			match = true
		}
	}
	return false, 0, false
}
