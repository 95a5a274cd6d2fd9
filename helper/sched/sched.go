// Package sched parses the queue/scheduler line and decides, with the
// kernel's own matching rules, whether a requested scheduler is the one
// already active. Kernel references are to block/elevator.c and
// block/elevator.h of Debian's linux-source-7.3 (7.3.4).
package sched

import (
	"errors"
	"fmt"
	"strings"
)

// NameMax is ELV_NAME_MAX (block/elevator.h:86). elv_iosched_store()
// copies the written buffer with strscpy() into a char[ELV_NAME_MAX], so
// at most NameMax-1 bytes of a name reach the kernel.
const NameMax = 16

// None is the pseudo-scheduler "no elevator".
const None = "none"

// aliases maps each elevator to its elevator_alias: only mq-deadline has
// one in 7.3 (block/mq-deadline.c:1010, .elevator_alias = "deadline").
// The alias is not shown in queue/scheduler, so it must be known here.
var aliases = map[string]string{
	"mq-deadline": "deadline",
}

// Line is a parsed queue/scheduler attribute.
type Line struct {
	Active  string   // the bracketed name, e.g. "mq-deadline" or "none"
	Offered []string // every name in the line, in the kernel's order
}

// ErrNoActive is returned for a line without a bracketed name.
var ErrNoActive = errors.New("no active scheduler in line")

// Parse reads the format elv_iosched_show() prints
// (block/elevator.c:843-866): "none " or "[none] ", then each registered
// elevator as "name " or "[name] ", then "\n".
func Parse(line string) (Line, error) {
	var l Line
	for _, f := range strings.Fields(line) {
		name := f
		if strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]") && len(f) > 2 {
			name = f[1 : len(f)-1]
			if l.Active != "" {
				return Line{}, fmt.Errorf("two active schedulers in %q", line)
			}
			l.Active = name
		}
		l.Offered = append(l.Offered, name)
	}
	if l.Active == "" {
		return Line{}, fmt.Errorf("%w %q", ErrNoActive, line)
	}
	return l, nil
}

// Effective returns the name the kernel acts on when buf is written:
// strscpy() into char[ELV_NAME_MAX] stops at a NUL and keeps at most
// ELV_NAME_MAX-1 bytes, then strstrip() removes leading and trailing
// white space (block/elevator.c:804-805). The cut happens before the strip.
func Effective(buf string) string {
	if i := strings.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i]
	}
	if len(buf) > NameMax-1 {
		buf = buf[:NameMax-1]
	}
	return strings.TrimFunc(buf, isspace)
}

// isspace is the kernel's _ctype space class (lib/ctype.c): space, \t,
// \n, \v, \f, \r.
func isspace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// IsNone reports whether the kernel treats the effective name as "no
// elevator": elevator_change() and elevator_switch() test
// strncmp(name, "none", 4) (block/elevator.c:570, 661), so any name that
// starts with "none" means none.
func IsNone(name string) bool {
	return strings.HasPrefix(name, None)
}

// Matches reports whether writing want would leave active unchanged, as
// elevator_change() decides under the freeze (block/elevator.c:680):
// no switch when the current elevator's name or alias equals the name
// (elevator_match, block/elevator.c:93-97). With no elevator the kernel
// always switches, even to "none"; for our purpose "none" on "none" is
// no change of scheduler, so it matches.
func Matches(active, want string) bool {
	want = Effective(want)
	if active == None {
		return IsNone(want)
	}
	if IsNone(want) {
		return false
	}
	return active == want || (aliases[active] != "" && aliases[active] == want)
}

// Offers returns the offered elevator the name selects, by name or alias,
// as __elevator_find() does (block/elevator.c:99-107).
func (l Line) Offers(want string) (string, bool) {
	want = Effective(want)
	if IsNone(want) {
		return None, true
	}
	for _, o := range l.Offered {
		if o == want || (aliases[o] != "" && aliases[o] == want) {
			return o, true
		}
	}
	return "", false
}

// ErrBadName is returned by CheckName.
var ErrBadName = errors.New("bad scheduler name")

// CheckName accepts only names the kernel would take as written: 1 to
// NameMax-1 bytes of [a-z0-9_-]. Longer names would be cut silently by
// the kernel and so select something other than what was asked.
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrBadName)
	}
	if len(name) > NameMax-1 {
		return fmt.Errorf("%w %q: longer than %d bytes", ErrBadName, name, NameMax-1)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("%w %q: byte %q not in [a-z0-9_-]", ErrBadName, name, c)
		}
	}
	return nil
}

// ParseList splits an ordered preference list such as
// "bfq,mq-deadline,none" and checks every name. White space around names
// is ignored, as the kernel strips it too.
func ParseList(list string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimFunc(n, isspace)
		if err := CheckName(n); err != nil {
			return nil, fmt.Errorf("scheduler list %q: %w", list, err)
		}
		names = append(names, n)
	}
	return names, nil
}
