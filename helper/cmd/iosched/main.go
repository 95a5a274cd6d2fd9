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
//	iosched audit [RULES-FILE-OR-DIR...]
//	iosched probe [--runs N]
//
// DEVICE is a kernel name (sda, nvme0n1, loop3), a /dev path or a /sys
// path; a partition means its whole disk. The list is ordered: the first
// scheduler the disk can use wins. ATTR is a queue attribute such as
// wbt_lat_usec or read_ahead_kb, or iosched/NAME for a tunable of the
// scheduler; each is written only if the kernel would change it, after
// the scheduler. "udev" is the entry point for a udev RUN+= rule: it reads
// ACTION, DEVPATH, DEVTYPE, IOSCHED_SCHEDULER, IOSCHED_ATTR_<attr> and
// IOSCHED_TUNE_<tunable> from the environment. Installed as iosched-udev,
// the program runs "udev".
//
// "apply" does what "udev" does, for every disk or the DEVICEs named,
// with the policy read from the udev database instead of an event.
// "status --check" exits 1 when a disk's recorded policy does not hold;
// "status --format=prometheus" prints it for node_exporter.
//
// "audit" lists udev rules that write a queue attribute whose every write
// freezes the queue (ATTR{} on change events), with the iosched rule that
// replaces each; it exits 1 when it finds any. "probe" attaches a
// throwaway loop device and times unchanged writes of the scheduler and of
// each such attribute, to tell whether this kernel still freezes for
// nothing.
//
// Exit status: 0 done or nothing to do, 1 failure, 2 usage or bad input.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/iosched/iosched/helper/kmod"
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

// env is everything a command touches, so tests run it in-process on a
// fixture tree.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	environ        func() []string
	sys            sysfs.FS
	modules        func() kmod.Index
	udev           udevdb.Lookup
	devNum         func(string) (uint32, uint32, error) // nil: stat(2)
	rulesDirs      []string                             // udev rules directories, by precedence
}

func main() {
	e := env{
		stdout:    os.Stdout,
		stderr:    os.Stderr,
		getenv:    os.Getenv,
		environ:   os.Environ,
		sys:       sysfs.Default,
		modules:   runningKernelModules,
		udev:      udevdb.Policy,
		rulesDirs: rulesaudit.Dirs,
	}
	args := os.Args[1:]
	if filepath.Base(os.Args[0]) == "iosched-udev" {
		args = append([]string{"udev"}, args...)
	}
	os.Exit(run(e, args))
}

func runningKernelModules() kmod.Index {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return kmod.ForRelease("/", unix.ByteSliceToString(u.Release[:]))
}

const usage = `usage: iosched set [--dry-run] DEVICE [SCHEDULER[,SCHEDULER...]] [ATTR=VALUE...]
       iosched udev
       iosched status [--check] [--format=table|json|prometheus]
       iosched apply [--dry-run] [DEVICE...]
       iosched audit [RULES-FILE-OR-DIR...]
       iosched probe [--runs N]
`

// usageError marks errors that exit with status 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

func run(e env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "set":
		err = cmdSet(e, args[1:])
	case "udev":
		err = cmdUdev(e, args[1:])
	case "status":
		err = cmdStatus(e, args[1:])
	case "apply":
		err = cmdApply(e, args[1:])
	case "audit":
		err = cmdAudit(e, args[1:])
	case "probe":
		err = cmdProbe(e, args[1:])
	case "-h", "--help", "help":
		fmt.Fprint(e.stdout, usage)
		return exitOK
	default:
		err = usagef("unknown command %q", args[0])
	}
	if err == nil {
		return exitOK
	}
	var found errFound
	var reported errReported
	if errors.As(err, &found) || errors.As(err, &reported) {
		return exitFailure
	}
	fmt.Fprintf(e.stderr, "iosched: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprint(e.stderr, usage)
		return exitUsage
	}
	return exitFailure
}
