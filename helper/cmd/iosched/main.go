// Command iosched sets a disk's I/O scheduler only when it would change.
//
// Writing queue/scheduler freezes the disk's queue even when the value is
// the one already active; iosched reads first and writes only a change.
//
// Usage:
//
//	iosched set [--dry-run] DEVICE [SCHEDULER[,SCHEDULER...]] [ATTR=VALUE...]
//	iosched udev
//	iosched status [--check] [--format=table|json|prometheus]
//	iosched apply [--dry-run] [DEVICE...]
//	iosched pin DEVICE [SCHEDULER[,SCHEDULER...]] [ATTR=VALUE...]
//	iosched unpin DEVICE
//	iosched audit [--fix [--dry-run] [--renamed-schedulers] | --undo [--forget FILE...]] [RULES-FILE-OR-DIR...]
//	iosched probe [--runs N]
//	iosched help [COMMAND]
//	iosched version
//
// Each command's entry in the commands table below, printed by
// "iosched help CMD", says what it does; man/iosched.8.md says more.
// Installed as iosched-udev, the program runs "udev", the entry point of
// a udev RUN+= rule. Flags may follow the positional arguments; "--"
// ends them.
//
// Exit status: 0 done or nothing to do, 1 failure, 2 usage or bad input
// (and 3 for audit --fix that converted some files and refused others).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/iosched/iosched/helper/disklock"
	"github.com/iosched/iosched/helper/jiffies"
	"github.com/iosched/iosched/helper/kmod"
	"github.com/iosched/iosched/helper/policy"
	"github.com/iosched/iosched/helper/rulesaudit"
	"github.com/iosched/iosched/helper/sysfs"
	"github.com/iosched/iosched/helper/udevdb"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// version is set at build time from debian/changelog's top entry
// (-ldflags -X main.version=...); `go run` and `go test` builds say devel.
var version = "devel"

// env is everything a command touches, so tests run it in-process on a
// fixture tree.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	environ        func() []string
	sys            sysfs.FS
	dev            string       // the device directory, "/dev"; "" in tests on fixtures
	locks          disklock.Dir // where the per-disk writer locks live
	modules        func() kmod.Index
	udev           udevdb.Lookup
	devNum         func(string) (uint32, uint32, error) // nil: stat(2)
	rulesDirs      []string                             // udev rules directories, by precedence
	root           string                               // filesystem root of other writers' configuration and of pins; "": none
	geteuid        func() int
	hz             func() (jiffies.HZ, string, error) // the running kernel's HZ; nil: unknown
}

func main() {
	e := env{
		stdout:    os.Stdout,
		stderr:    os.Stderr,
		getenv:    os.Getenv,
		environ:   os.Environ,
		sys:       sysfs.Default,
		dev:       "/dev",
		locks:     disklock.Default,
		modules:   kmod.Running,
		udev:      udevdb.Policy,
		rulesDirs: rulesaudit.Dirs,
		root:      "/",
		geteuid:   os.Geteuid,
		hz:        jiffies.Running(),
	}
	args := os.Args[1:]
	if filepath.Base(os.Args[0]) == "iosched-udev" {
		args = append([]string{"udev"}, args...)
	}
	os.Exit(run(e, args))
}

// command is one subcommand: its synopsis (after "iosched "), what
// `iosched help CMD` adds, and the function that runs it.
type command struct {
	name, synopsis, help string
	run                  func(e env, args []string) error
}

// commands is filled in init: cmdHelp, one of its entries, reads it.
var commands []command

func init() {
	commands = []command{
		{"set", "set [--dry-run] DEVICE [SCHEDULER[,SCHEDULER...]] [ATTR=VALUE...]", `Give DEVICE the first scheduler of the list that it can use and set each
queue attribute, writing only what would change. DEVICE is a kernel name
(sda, nvme0n1), a /dev path or a /sys path; a partition means its disk.
ATTR is a queue/ attribute (wbt_lat_usec, read_ahead_kb, ...) or
iosched/NAME, a tunable of the scheduler that will be active.
  --dry-run  say what would change, write nothing
`, cmdSet},
		{"udev", "udev", `The entry point of a udev RUN+= rule: reads ACTION, DEVPATH, DEVTYPE,
IOSCHED_SCHEDULER, IOSCHED_ATTR_<attr> and IOSCHED_TUNE_<tunable> from the
environment and does what set does. Bad properties are reported one a
line and skipped; the rest is applied, and the exit status is then 1.
`, cmdUdev},
		{"status", "status [--check] [--format=table|json|prometheus]", `One row per disk: active scheduler, the ones offered, rotational, the
list udev recorded and whether the recorded policy holds.
  --check   exit 1 when a disk's policy does not hold, one stderr line each
  --format  table (the default), json, or prometheus (node_exporter's
            textfile collector)
  --json    the same as --format=json
`, cmdStatus},
		{"apply", "apply [--dry-run] [DEVICE...]", `Bring every disk, or each DEVICE, to the policy udev recorded for it (in
the udev database), as udev would on an event but without one. Writes
only what would change; exit 1 when a disk could not be brought to it.
  --dry-run  say what would change, write nothing
`, cmdApply},
		{"pin", "pin DEVICE [SCHEDULER[,SCHEDULER...]] [ATTR=VALUE...]", `Keep DEVICE's own policy by what the disk is, not its kernel name: one
line in /etc/udev/rules.d/61-iosched-pin.rules matching the most stable
identity udev gives the disk (ID_WWN, else ID_SERIAL, else ID_PATH). A
disk with none is refused. It applies from the disk's next event.
`, cmdPin},
		{"unpin", "unpin DEVICE", `Remove DEVICE's pin; the file goes with the last one.
`, cmdUnpin},
		{"audit", "audit [--fix [--dry-run] [--renamed-schedulers] | --undo [--forget FILE...]] [RULES-FILE-OR-DIR...]", `List udev rules that write a freezing queue attribute on change events:
exit 0 when there are none, 1 when there are any, 2 when a rules file or
directory could not be read (reported and skipped). Without arguments,
read udev's rules directories and list the other writers too.
  --fix      convert each rules file udevd reads in place, into a file of
             the same name in /etc/udev/rules.d; exit 3 when it converted
             some files and refused others, 2 when it refused them all
  --dry-run  with --fix: print the files it would write as a unified diff
  --renamed-schedulers
             with --fix: convert writes of "noop" and "cfq", which fail
             today, to "none" and "bfq" rather than drop them
  --undo     put back what --fix changed, unless changed since
  --forget FILE...
             with --undo: drop the journal's record of each FILE, which
             stays as it is
`, cmdAudit},
		{"probe", "probe [--runs N]", `Attach a throwaway loop device (root only) and time unchanged writes of
the scheduler and of each freezing attribute.
  --runs N  unchanged writes per attribute, median reported (default 10)
`, cmdProbe},
		{"help", "help [COMMAND]", "Print the usage of COMMAND, or of all commands.\n", cmdHelp},
		{"version", "version", "Print the version.\n", cmdVersion},
	}
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// topUsage lists every command's synopsis.
func topUsage() string {
	var b strings.Builder
	for i, c := range commands {
		lead := "       iosched "
		if i == 0 {
			lead = "usage: iosched "
		}
		b.WriteString(lead + c.synopsis + "\n")
	}
	return b.String()
}

func (c command) usage() string {
	return "usage: iosched " + c.synopsis + "\n"
}

func cmdHelp(e env, args []string) error {
	fs := newFlagSet("help")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch len(pos) {
	case 0:
		return writeOut(e, topUsage())
	case 1:
		c, ok := lookupCommand(pos[0])
		if !ok {
			return usagef("help: unknown command %q", pos[0])
		}
		return writeOut(e, c.usage()+"\n"+c.help)
	}
	return usagef("help takes at most one command")
}

func cmdVersion(e env, args []string) error {
	pos, err := parseArgs(newFlagSet("version"), args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("version takes no arguments")
	}
	return writeOut(e, "iosched "+version+"\n")
}

// writeOut writes s to stdout in one write; a failed write is a failure
// (exit 1), as for any command whose output is its answer.
func writeOut(e env, s string) error {
	if _, err := io.WriteString(e.stdout, s); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// usageError marks errors that exit with status 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

// reported ends a command with this exit status and no further
// message: it has printed what it had to say.
type reported int

func (r reported) Error() string { return fmt.Sprintf("exit status %d", int(r)) }

// errHelp: the command printed its usage on request; exit 0.
var errHelp = errors.New("help requested")

// newFlagSet returns a flag set that prints nothing itself: parseArgs
// and run report its errors.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseArgs parses flags anywhere among the arguments (the standard
// flag package stops at the first positional one) and returns the
// positional arguments in order. "--" ends the flags: everything after it
// is positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, usageError{err}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// Parse consumed len(args)-len(rest) arguments; it stops after
		// "--" or before the first positional one.
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func run(e env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, topUsage())
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "--help":
		name = "help"
	case "--version":
		name = "version"
	}
	c, ok := lookupCommand(name)
	if !ok {
		fmt.Fprintf(e.stderr, "iosched: %s\n", policy.ClipQuoted(fmt.Sprintf("unknown command %q", name)))
		fmt.Fprint(e.stderr, topUsage())
		return exitUsage
	}
	err := c.run(e, args[1:])
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errHelp) {
		if werr := writeOut(e, c.usage()+"\n"+c.help); werr != nil {
			fmt.Fprintf(e.stderr, "iosched: %v\n", werr)
			return exitFailure
		}
		return exitOK
	}
	var done reported
	if errors.As(err, &done) {
		return int(done)
	}
	e.reportErr(err)
	var ue usageError
	if errors.As(err, &ue) {
		// udev logs a RUN program's output: no usage text there.
		if c.name != "udev" {
			fmt.Fprint(e.stderr, c.usage())
		}
		return exitUsage
	}
	return exitFailure
}

// reportErr writes err to stderr, one line an error (errors.Join puts
// each on its own line), each quoted value clipped.
func (e env) reportErr(err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(e.stderr, "iosched: %s\n", policy.ClipQuoted(line))
	}
}
