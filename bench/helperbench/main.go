// Command helperbench measures what setting an I/O scheduler costs, with
// and without the iosched helper, on loop devices it attaches itself, and
// checks the numbers against the targets below (docs/targets.md says where
// each comes from).
//
// Usage (as root, after `make build`, from the repository root):
//
//	go run ./bench/helperbench [-n RUNS] [-out docs/bench-helper.md]
//
// All single-disk variants (variants.go) run on one fresh loop device,
// interleaved round robin (the order rotating each round) so drift hits
// every variant alike: raw unchanged writes, the helper with nothing to
// do and with a change, the shell one-liner that compares first, the udev
// entry point, and the floors (cat, /bin/true, an empty Go program).
// status.go times `iosched status` over exactly 1, 8 and 64 loop devices.
// Processes are timed by wall clock from start to the end of wait, two
// ways: by Go's os/exec (vfork: the child's own cost), and, for every
// command that changes nothing, by forkexec (./bench/helperbench/forkexec,
// built with cc), a plain fork + exec as systemd-udevd starts a RUN+=
// program. The tables (report.go) are written to -out; stdout lists the
// targets, "ok NAME" or "fail NAME" a line, which test/bench/helper.test
// reports as results (test/lib/ktap.sh).
//
// Every loop device is detached on exit, on failure and on SIGINT/SIGTERM
// (loops.go); the measured disk gets back the scheduler it had when
// attached (a loop device's queue keeps its elevator across detach).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/iosched/iosched/test/testhost"
)

// The targets, checked in report.go; docs/targets.md gives each anchor.
const (
	// noopPerGoCat bounds a helper run that changes nothing against a Go
	// program of the same build that reads the same file and exits (the
	// "Go cat F" floor): that is the least any Go helper started per
	// RUN+= pays, so what is above it is the helper's own work (argument
	// parsing, the policy, the decision). Anchored on Go cat, not on cat,
	// because the Go runtime's start alone measured 1.09-1.31x cat on one
	// machine and 1.96-2.14x on another (docs/targets.md): a cat anchor
	// measures the machine. 1.5x leaves half a Go start for the decision;
	// the no-ops measured 1.11-1.64x of it (docs/targets.md).
	noopPerGoCat = 1.5
	// udevCgoOverStatic is how much slower the cgo (libudev) build may be
	// than the static one for the udev no-op before the udev entry point
	// ships as its own static binary: a second binary to build, package
	// and install pays off only when it saves a fifth of every event.
	udevCgoOverStatic = 1.2
	// statusPerDisk bounds what each disk adds to `iosched status`: 1000
	// disks then cost at most 100 ms more than one, the delay under which
	// a command still answers at once.
	statusPerDisk = 100 * time.Microsecond
	// maxBinary bounds bin/iosched stripped: it is installed on every
	// machine the rules run on, and 4 MB is about 1.7x the 2.4 MB that
	// docs/bench-helper.md records, so a dependency that doubles the
	// binary fails here instead of slipping in.
	maxBinary = 4_000_000
)

// A helper run that changes nothing must also cost less than the
// unchanged write(2) it avoids, or it would gain nothing: that target
// has no number, the write's own cost is the bound (report.go).

// nsMarker in the environment tells the re-executed child that it runs in
// its private mount namespace.
const nsMarker = "IOSCHED_BENCH_IN_NS"

var (
	runs     = flag.Int("n", 30, "timed runs of each variant (at least 20)")
	out      = flag.String("out", "docs/bench-helper.md", "markdown file to write, relative to -root")
	root     = flag.String("root", "", "repository root (default: the go.mod above the working directory)")
	diskSize = flag.Int64("size", 64<<20, "size of the measured loop device's backing file")
)

func main() {
	flag.Parse()
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "helperbench: must run as root (it attaches loop devices and writes their queue/scheduler)")
		os.Exit(2)
	}
	if *runs < 20 {
		fmt.Fprintln(os.Stderr, "helperbench: -n must be at least 20")
		os.Exit(2)
	}
	if os.Getenv(nsMarker) == "" {
		os.Exit(reexecInNamespace())
	}
	b := &bench{}
	go b.loops.onSignal()
	err := b.run()
	b.loops.cleanup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "helperbench: %v\n", err)
		os.Exit(1)
	}
}

// reexecInNamespace runs this program again in a private mount namespace
// (os/exec makes / MS_REC|MS_PRIVATE there), so the bind mounts over
// /sys/block of status.go are seen by nobody else and vanish with the
// process. A mount namespace belongs to a thread, so it must be made
// before the Go runtime starts its threads: hence the re-exec.
func reexecInNamespace() int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "helperbench: %v\n", err)
		return 1
	}
	cmd := exec.Command(self, os.Args[1:]...)
	cmd.Env = append(os.Environ(), nsMarker+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	// The child cleans up on SIGINT/SIGTERM; we only wait for it.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGINT, syscall.SIGTERM)
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "helperbench: %v\n", err)
		return 1
	}
	return 0
}

// bench is one run of the benchmark.
type bench struct {
	root    string // repository root
	loops   loopSet
	bins    binaries
	disk    *disk // the measured loop device
	results results
	status  *statusResult
	host    hostInfo // the machine, read before the first timed run
	targets []target // as report() checked them
}

func (b *bench) run() error {
	b.host = readHost()
	b.results = results{samples: map[string][]time.Duration{}, forkSamples: map[string][]time.Duration{}}
	var err error
	if *root == "" {
		*root = "."
	}
	if b.root, err = testhost.RepoRoot(*root); err != nil {
		return fmt.Errorf("%w: run from the repository or pass -root", err)
	}
	if b.loops.tmp, err = os.MkdirTemp("", "helperbench-"); err != nil {
		return err
	}
	if b.bins, err = build(b.root, b.loops.tmp); err != nil {
		return err
	}
	if b.disk, err = b.loops.attach(*diskSize); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "helperbench: measuring %s (%s), %d rounds\n", b.disk.dev.Node(), b.disk.devpath, *runs)
	if err := b.singleDisk(); err != nil {
		return err
	}
	if b.status, err = b.statusScaling(); err != nil {
		return err
	}
	report := b.report()
	dst := *out
	if !filepath.IsAbs(dst) {
		dst = filepath.Join(b.root, dst)
	}
	if err := os.WriteFile(dst, []byte(report), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "helperbench: wrote %s\n", dst)
	return writeTargets(os.Stdout, b.targets)
}

// command is how the report names this run.
func command() string {
	return strings.Join(append([]string{"go run ./bench/helperbench"}, os.Args[1:]...), " ")
}
