// Package policy is what iosched does to one disk: a policy (an ordered
// scheduler list and queue settings) read from a command line or from
// udev properties, checked in one pass against the kernel's parsing and
// the queue's state before anything is opened for writing, then applied
// writing only what would change. The commands only parse their
// arguments and print what this package reports.
package policy

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/iosched/iosched/helper/pin"
	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/sched"
)

// Keep ends a scheduler list to say "else leave the scheduler as it
// is": no write and no failure when no earlier name can be used (TLP's
// DISK_IOSCHED keeps the word).
const Keep = "keep"

// Setting is one ATTR=VALUE of a command line or of the udev properties.
type Setting struct {
	Spec  queueattr.Spec
	Value string
	From  string // what asked for it, for messages: "iosched/fifo_batch" or "IOSCHED_TUNE_fifo_batch"
}

// Policy is what one disk should look like.
type Policy struct {
	Wanted   []string // the scheduler list, first usable wins; nil leaves the scheduler alone
	Keep     bool     // the list ended in Keep
	Settings []Setting
	Source   Wanted // where the scheduler list came from (FromProperties)
}

// Empty reports whether the policy asks for nothing.
func (p Policy) Empty() bool { return p.Wanted == nil && !p.Keep && len(p.Settings) == 0 }

// Pin is the pin that keeps p for the disk udev knows as key=value
// (pin.Identity): its properties as the rules record them.
func (p Policy) Pin(key, value string) pin.Pin {
	rule := pin.Pin{Key: key, Value: value}
	if p.Wanted != nil || p.Keep {
		rule.Props = append(rule.Props, [2]string{queueattr.Property(queueattr.Scheduler), p.Source.List})
	}
	for _, s := range p.Settings {
		rule.Props = append(rule.Props, [2]string{queueattr.Property(s.Spec.Name), s.Value})
	}
	return rule
}

// String is p as a command line gives it: the list, then ATTR=VALUE.
func (p Policy) String() string {
	parts := []string{p.Source.List}
	for _, s := range p.Settings {
		parts = append(parts, s.Spec.Name+"="+s.Value)
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

// ErrConflict is returned for settings that cannot hold together: the
// same attribute twice, or two names of one kernel value.
var ErrConflict = errors.New("conflicting settings")

// ParseList reads a scheduler list such as "bfq,mq-deadline,keep".
// Keep may only come last, and not alone.
func ParseList(list string) (wanted []string, keep bool, err error) {
	names, err := sched.ParseList(list)
	if err != nil {
		return nil, false, err
	}
	if i := slices.Index(names, Keep); i >= 0 {
		if i != len(names)-1 || len(names) == 1 {
			return nil, false, fmt.Errorf("scheduler list %q: %w %q: it ends a list of at least one scheduler", list, sched.ErrBadName, Keep)
		}
		return names[:i], true, nil
	}
	return names, false, nil
}

// ParseSetting checks one ATTR=VALUE against the kernel's parsing of the
// value alone; the queue's state is Disk.Check's.
func ParseSetting(name, value string) (Setting, error) {
	spec, err := queueattr.Lookup(name)
	if err != nil {
		return Setting{}, err
	}
	if err := spec.Check(value); err != nil {
		return Setting{}, err
	}
	return Setting{spec, value, name}, nil
}

// Parse reads a command line's policy: an optional scheduler list (the
// first argument, when it holds no "="), then ATTR=VALUE arguments. Any
// bad part is an error: nothing of it is applied.
func Parse(args []string) (Policy, error) {
	var p Policy
	if len(args) > 0 && !strings.Contains(args[0], "=") {
		var err error
		if p.Wanted, p.Keep, err = ParseList(args[0]); err != nil {
			return Policy{}, err
		}
		p.Source = Wanted{List: args[0], Source: SourceArgs}
		args = args[1:]
	}
	for _, kv := range args {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return Policy{}, fmt.Errorf("%q: want ATTR=VALUE (the scheduler list goes first)", kv)
		}
		s, err := ParseSetting(name, value)
		if err != nil {
			return Policy{}, err
		}
		p.Settings = append(p.Settings, s)
	}
	kept, bad := conflicts(p.Settings)
	if len(bad) > 0 {
		return Policy{}, errors.Join(bad...)
	}
	p.Settings = order(kept)
	return p, nil
}

// Keys lists the attribute properties that are set among KEY=VALUE
// pairs (an event's environment), sorted by name. An empty value is an
// override's opt-out: not listed.
func Keys(kvs []string) []string {
	var keys []string
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		if name, ok := queueattr.FromProperty(k); ok && name != queueattr.Scheduler && v != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// KeysOf lists the attribute properties among recorded ones (Keys).
func KeysOf(props map[string]string) []string {
	kvs := make([]string, 0, len(props))
	for k, v := range props {
		kvs = append(kvs, k+"="+v)
	}
	return Keys(kvs)
}

// Asks reports whether properties (read by get; keys from Keys) ask
// anything of the disk: a list, a command line's, or an attribute.
func Asks(get func(string) string, keys []string) bool {
	return get(queueattr.Property(queueattr.Scheduler)) != "" || get(queueattr.CmdlineProperty) != "" || len(keys) > 0
}

// FromProperties reads a udev policy: the list of IOSCHED_SCHEDULER or
// the kernel command line's (ListFor), and the attribute properties
// keys (Keys); get reads one. It never gives up on good input: each bad
// property comes back as an error naming disk, and the rest still counts.
func FromProperties(disk string, keys []string, get func(string) string) (Policy, []error) {
	var p Policy
	w, bad := wantedList(disk, get)
	p.Source = w
	if w.List != "" {
		var err error
		if p.Wanted, p.Keep, err = ParseList(w.List); err != nil {
			// Keep the scheduler as it is; the attributes still apply.
			bad = append(bad, fmt.Errorf("%s: %s=%q: %w", disk, queueattr.Property(queueattr.Scheduler), w.List, err))
		}
	}
	for _, k := range keys {
		name, _ := queueattr.FromProperty(k)
		v := get(k)
		s, err := ParseSetting(name, v)
		switch {
		case errors.Is(err, queueattr.ErrBadValue):
			// The message names the attribute and the value already.
			bad = append(bad, fmt.Errorf("%s: %s: %w", disk, Clip(k), err))
			continue
		case err != nil:
			bad = append(bad, fmt.Errorf("%s: %s=%q: %w", disk, Clip(k), v, err))
			continue
		}
		s.From = k
		p.Settings = append(p.Settings, s)
	}
	kept, conflicting := conflicts(p.Settings)
	for _, err := range conflicting {
		bad = append(bad, fmt.Errorf("%s: %w; skipped", disk, err))
	}
	p.Settings = order(kept)
	return p, bad
}

// linked are the names that set one kernel value in two units: bfq's
// slice_idle (ms) and slice_idle_us both store bfqd->bfq_slice_idle
// (bfq-iosched.c:bfq_slice_idle_store, bfq_slice_idle_us_store), so
// given both, the one written last wins and the other is written again
// on every run.
var linked = [][2]string{{"iosched/slice_idle", "iosched/slice_idle_us"}}

// conflicts drops the settings that cannot hold together, with an error
// for each: a second setting of one attribute, and both names of a
// linked pair.
func conflicts(settings []Setting) ([]Setting, []error) {
	var bad []error
	drop := map[int]bool{}
	first := map[string]int{}
	for i, s := range settings {
		if j, ok := first[s.Spec.Name]; ok {
			bad = append(bad, fmt.Errorf("%s=%q and %s=%q: %w: %s given twice", Clip(settings[j].From), settings[j].Value,
				Clip(s.From), s.Value, ErrConflict, s.Spec.Name))
			drop[i], drop[j] = true, true
			continue
		}
		first[s.Spec.Name] = i
	}
	for _, l := range linked {
		i, ok1 := first[l[0]]
		j, ok2 := first[l[1]]
		if ok1 && ok2 && !drop[i] && !drop[j] {
			bad = append(bad, fmt.Errorf("%s=%q and %s=%q: %w: one kernel value in two units, give one", Clip(settings[i].From),
				settings[i].Value, Clip(settings[j].From), settings[j].Value, ErrConflict))
			drop[i], drop[j] = true, true
		}
	}
	var kept []Setting
	for i, s := range settings {
		if !drop[i] {
			kept = append(kept, s)
		}
	}
	return kept, bad
}

// order sorts settings into the order whose writes do not undo each
// other, keeping the given order within a class:
//   - the attributes whose every write commits the queue limits first:
//     each commit runs blk-settings.c:blk_apply_bdi_limits, which raises
//     a lowered read_ahead_kb again;
//   - then the other queue attributes;
//   - the scheduler's tunables last, after the switch that replaces
//     them and after nr_requests, whose change resets mq-deadline's
//     async_depth (dd_depth_updated);
//   - among them strict_guarantees before slice_idle: turning it on
//     raises slice_idle to 8 ms (bfq_strict_guarantees_store).
func order(settings []Setting) []Setting {
	class := func(s Setting) int {
		switch {
		case s.Spec.Kind == queueattr.Tunable && s.Spec.Name == "iosched/strict_guarantees":
			return 2
		case s.Spec.Kind == queueattr.Tunable:
			return 3
		case s.Spec.Freezes:
			return 0
		}
		return 1
	}
	out := slices.Clone(settings)
	slices.SortStableFunc(out, func(a, b Setting) int { return class(a) - class(b) })
	return out
}

// MaxShown is how much of a value a message shows: a hostile value (a
// udev property, an argument) must not flood the log.
const MaxShown = 64

// Clip cuts a raw string, such as a property name, for a message.
func Clip(s string) string {
	if len(s) <= MaxShown {
		return s
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:MaxShown], len(s))
}

// ClipQuoted cuts every Go-quoted string in msg whose value is longer
// than MaxShown bytes to its first MaxShown bytes, "..." and its
// length. A hand-written scan, not a regexp: compiling one at start-up
// would cost every udev event.
func ClipQuoted(msg string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '"')
		if i < 0 {
			break
		}
		j := i + 1
		for j < len(msg) && msg[j] != '"' {
			if msg[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(msg) {
			break // no closing quote: leave the rest as it is
		}
		b.WriteString(msg[:i])
		b.WriteString(clipOne(msg[i : j+1]))
		msg = msg[j+1:]
	}
	b.WriteString(msg)
	return b.String()
}

// clipOne cuts one quoted string q.
func clipOne(q string) string {
	raw, err := strconv.Unquote(q)
	if err != nil {
		raw = q[1 : len(q)-1]
	}
	if len(raw) <= MaxShown {
		return q
	}
	cut := strconv.Quote(raw[:MaxShown])
	return fmt.Sprintf("%s...\" (%d bytes)", cut[:len(cut)-1], len(raw))
}
