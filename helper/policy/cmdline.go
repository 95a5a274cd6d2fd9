package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/iosched/iosched/helper/pin"
	"github.com/iosched/iosched/helper/queueattr"
)

// Where a disk's scheduler list came from, as status shows it.
const (
	SourceClass   = "class"        // 60-iosched.rules' class of the disk
	SourceCmdline = "command line" // elevator= or iosched.scheduler=
	SourceRule    = "rule"         // a rule other than the class's set IOSCHED_SCHEDULER
	SourceArgs    = "arguments"    // `iosched set`'s own
	SourcePin     = "pin"          // `iosched pin`'s rule for this disk
)

// Wanted is a disk's scheduler list and where it came from.
type Wanted struct {
	List   string
	Source string // Source*; "" when nothing asks for a scheduler
	// Param is the kernel command line parameter as written, when
	// Source is SourceCmdline: "iosched.scheduler=sda:bfq".
	Param string
}

// WantedFor is the scheduler list the recorded properties (read by get)
// ask of disk, and where it came from; malformed parts come back as
// errors, each once, and the list is what stands without them.
func WantedFor(disk string, get func(string) string) (Wanted, []error) {
	return wantedList(disk, get)
}

// wantedList is the one place the kernel command line is read: from
// the properties 60-iosched.rules recorded (the class's list, the
// command line's two parameters, and the list it composed from them),
// the disk's list and its source. Each malformed parameter is one error
// naming it as written, and the list falls back to what stood before
// it: the class's. A list some other rule composed stands as it is.
func wantedList(disk string, get func(string) string) (Wanted, []error) {
	list := get(queueattr.Property(queueattr.Scheduler))
	if id := get(pin.Property); id != "" && list == get(pin.SchedulerProperty) {
		// The pin sorts after the class and the command line's rules
		// and wins over both, as a local rule does.
		return Wanted{List: list, Source: SourcePin, Param: id}, nil
	}
	class := get(queueattr.ClassProperty)
	elev := get(queueattr.CmdlineElevatorProperty)
	cmd := get(queueattr.CmdlineSchedulerProperty)
	if cmd == "" {
		cmd = get(queueattr.CmdlineProperty)
	}
	perDisk := strings.Contains(cmd, ":")

	// Undo what the rules' last block did, to find the list before it.
	base, fromCmdline := list, false
	switch {
	case cmd != "" && !perDisk && list == cmd:
		base, fromCmdline = class, true
	case elev != "" && list == elev:
		base, fromCmdline = "", true
	case elev != "" && strings.HasPrefix(list, elev+","):
		base, fromCmdline = strings.TrimPrefix(list, elev+","), true
	}
	w := Wanted{List: base, Source: SourceRule}
	switch {
	case base == "" && !fromCmdline && list == "":
		w.Source = ""
	case base == class && class != "":
		w.Source = SourceClass
	}
	if !fromCmdline && !perDisk {
		return w, nil
	}
	var bad []error
	// elevator= only where the rules put it in front of the list: a rule
	// sorting later, or a multipath path's none, replaced it.
	if elev != "" && fromCmdline {
		param := "elevator=" + elev
		if err := oneName(elev); err != nil {
			bad = append(bad, w.malformed(disk, param, err))
		} else {
			w = Wanted{List: joinList(elev, w.List), Source: SourceCmdline, Param: param}
		}
	}
	if cmd == "" {
		return w, bad
	}
	param := "iosched.scheduler=" + cmd
	// An entry names the disk by its kernel name or by an identity udev
	// gives it (ID_WWN, ID_SERIAL: those that hold no ':').
	names := []string{disk}
	for _, k := range pin.Identities {
		if v := get(k); v != "" && !strings.Contains(v, ":") {
			names = append(names, v)
		}
	}
	entry, found, err := entryFor(names, cmd)
	switch {
	case err != nil:
		bad = append(bad, w.malformed(disk, param, err))
	case found:
		if _, _, err := ParseList(entry); err != nil {
			bad = append(bad, w.malformed(disk, param, err))
			break
		}
		w = Wanted{List: entry, Source: SourceCmdline, Param: param}
	}
	return w, bad
}

// malformed is the one error of a malformed parameter: it names it as
// written, and what stands instead of it (w).
func (w Wanted) malformed(disk, param string, err error) error {
	stands := "the scheduler is left as it is"
	switch {
	case w.Source == SourceCmdline:
		stands = fmt.Sprintf("%s stands (%s)", w.Param, w.List)
	case w.Source != "":
		stands = fmt.Sprintf("the %s policy stands (%s)", w.Source, w.List)
	}
	return fmt.Errorf("%s: kernel command line %q: %w; %s", disk, Clip(param), err, stands)
}

func joinList(first, rest string) string {
	if rest == "" {
		return first
	}
	return first + "," + rest
}

// oneName checks elevator='s value: one scheduler name.
func oneName(v string) error {
	names, keep, err := ParseList(v)
	if err != nil {
		return err
	}
	if len(names) != 1 || keep {
		return fmt.Errorf("want one scheduler name")
	}
	return nil
}

// entryFor picks the disk's entry of iosched.scheduler=ENTRY[/ENTRY...],
// where an entry is DISK:LIST for the disk that has one of names, or
// LIST for every disk not named; found is false when no entry is for it.
func entryFor(names []string, cmdline string) (entry string, found bool, err error) {
	mine, all := "", ""
	for _, e := range strings.Split(cmdline, "/") {
		name, l, named := strings.Cut(e, ":")
		switch {
		case e == "" || named && (name == "" || l == "" || strings.Contains(l, ":")):
			return "", false, fmt.Errorf("entry %q: want DISK:LIST or LIST, entries joined by /", Clip(e))
		case !named:
			all = e
		case slices.Contains(names, name) && !found:
			mine, found = l, true
		}
	}
	if found {
		return mine, true, nil
	}
	return all, all != "", nil
}

// why names what asked for the list, for a Change: the command line
// parameter as written, else the source.
func (w Wanted) why() string {
	if w.Param != "" {
		return w.Param
	}
	return w.Source
}
