// Command helperbench measures what setting an I/O scheduler costs, with
// and without the iosched helper, on loop devices it attaches itself.
//
// Usage (as root, after `make build`, from the repository root):
//
//	go run ./bench/helperbench [-n RUNS] [-out docs/bench-helper.md]
//
// All single-disk variants run on one fresh loop device, interleaved round
// robin (the order rotates each round) so drift hits every variant alike:
//
//	(a) unchanged write of queue/scheduler: write(2) in-process, and
//	    sh -c 'echo none > F'
//	(b) iosched set with nothing to do (cgo and static builds)
//	(c) iosched set that changes it (none -> mq-deadline, then back)
//	(d) the shell one-liner that compares first
//	(f) cat of the scheduler file and /bin/true: the process floor; an
//	    empty Go program and a Go cat of the file (./bench/helperbench/
//	    gofloor) built static and with cgo and libudev: the floor of any
//	    Go process of each build
//	attributes: an unchanged write of queue/rotational in-process, and
//	    iosched set DISK rotational=V with nothing to do (issue 5's target)
//	udev: the iosched udev no-op of both builds, and their ratio
//
// (e) runs iosched status over exactly 1, 8 and 64 attached loop devices:
// the benchmark runs in a private mount namespace and, for each timed run,
// bind-mounts over /sys/block a directory holding only the symlinks of
// those disks (the same relative links sysfs has, so every path resolves
// to the real device). Processes are timed by wall clock from start to the
// end of wait, two ways: by Go's os/exec (vfork: the child's own cost), and,
// for every command that changes nothing, by forkexec (./bench/helperbench/
// forkexec, built with cc), a plain fork + exec as systemd-udevd starts a
// RUN+= program. The table is printed and written to -out.
//
// Every loop device is detached on exit, on failure and on SIGINT/SIGTERM;
// the measured disk gets back the scheduler it had when attached (a loop
// device's queue keeps its elevator across detach).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

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
	go b.onSignal()
	err := b.main()
	b.cleanup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "helperbench: %v\n", err)
		os.Exit(1)
	}
}

// reexecInNamespace runs this program again in a private mount namespace
// (os/exec makes / MS_REC|MS_PRIVATE there), so the bind mounts over
// /sys/block for (e) are seen by nobody else and vanish with the process.
// A mount namespace belongs to a thread, so it must be made before the Go
// runtime starts its threads: hence the re-exec.
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

// loop is a loop device this program attached.
type loop struct {
	dev, name, img string
	orig           string // active scheduler at attach time
}

type bench struct {
	mu        sync.Mutex
	loops     []*loop
	mounted   bool
	closed    bool // cleanup ran: attach must not leave a new device behind
	realDisk  int  // entries in /sys/block when the benchmark started
	tmp       string
	once      sync.Once
	cgo       string
	static    string
	floorCgo  string // gofloor built like bin/iosched
	floorSt   string // gofloor built like bin/iosched-static
	forkexec  string // bench/helperbench/forkexec, built with cc
	rootDir   string
	disk      *loop
	sched     string // /sys/block/loopN/queue/scheduler of the measured disk
	schedLine string // its content with none active
	rot       string // its queue/rotational
	devpath   string
	samples   map[string][]time.Duration
	// forkSamples: the same variants timed by forkexec (fork + exec).
	forkSamples map[string][]time.Duration
	order       []string // variant names in report order
	started     time.Time
	loadFrom    string
}

func (b *bench) onSignal() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	s := <-c
	fmt.Fprintf(os.Stderr, "helperbench: %v: detaching loop devices\n", s)
	b.cleanup()
	os.Exit(130)
}

// cleanup unmounts our /sys/block overlay, restores the measured disk's
// scheduler and detaches every loop device we attached, each only if it
// still holds our backing file. It runs once.
func (b *bench) cleanup() {
	b.once.Do(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.mounted {
			if err := unix.Unmount("/sys/block", 0); err != nil {
				fmt.Fprintf(os.Stderr, "helperbench: unmount /sys/block overlay: %v\n", err)
			}
			b.mounted = false
		}
		for _, l := range b.loops {
			backing, err := os.ReadFile("/sys/block/" + l.name + "/loop/backing_file")
			if err != nil || strings.TrimSpace(string(backing)) != l.img {
				fmt.Fprintf(os.Stderr, "helperbench: not detaching %s: it no longer holds %s\n", l.dev, l.img)
				continue
			}
			sched := "/sys/block/" + l.name + "/queue/scheduler"
			if cur, err := activeOf(sched); err == nil && l.orig != "" && cur != l.orig {
				if err := os.WriteFile(sched, []byte(l.orig), 0); err != nil {
					fmt.Fprintf(os.Stderr, "helperbench: restore %s to %s: %v\n", sched, l.orig, err)
				}
			}
			if out, err := exec.Command("losetup", "-d", l.dev).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "helperbench: losetup -d %s: %v: %s", l.dev, err, out)
			}
		}
		b.loops = nil
		b.closed = true
		if b.tmp != "" {
			os.RemoveAll(b.tmp)
		}
	})
}

var loopRE = regexp.MustCompile(`^/dev/(loop[0-9]+)$`)

// attach creates a sparse file of size bytes and attaches it.
func (b *bench) attach(size int64) (*loop, error) {
	f, err := os.CreateTemp(b.tmp, "disk-*.img")
	if err != nil {
		return nil, err
	}
	img := f.Name()
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	outb, err := exec.Command("losetup", "-f", "--show", img).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("losetup -f --show %s: %v: %s", img, err, outb)
	}
	dev := strings.TrimSpace(string(outb))
	m := loopRE.FindStringSubmatch(dev)
	if m == nil {
		return nil, fmt.Errorf("losetup printed %q, not /dev/loopN", dev)
	}
	l := &loop{dev: dev, name: m[1], img: img}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		exec.Command("losetup", "-d", dev).Run()
		return nil, errors.New("interrupted")
	}
	b.loops = append(b.loops, l)
	b.mu.Unlock()
	l.orig, err = activeOf("/sys/block/" + l.name + "/queue/scheduler")
	return l, err
}

var activeRE = regexp.MustCompile(`\[([^\]\s]+)\]`)

func activeOf(path string) (string, error) {
	s, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	m := activeRE.FindAllSubmatch(s, -1)
	if len(m) != 1 {
		return "", fmt.Errorf("%s: %q has no single [active] scheduler", path, s)
	}
	return string(m[0][1]), nil
}

// ensure puts the measured disk into state name (untimed; compares first).
func (b *bench) ensure(name string) error {
	cur, err := activeOf(b.sched)
	if err != nil || cur == name {
		return err
	}
	if err := os.WriteFile(b.sched, []byte(name), 0); err != nil {
		return fmt.Errorf("set up %s = %s: %w", b.sched, name, err)
	}
	if cur, err = activeOf(b.sched); err == nil && cur != name {
		err = fmt.Errorf("%s reads %s after writing %s", b.sched, cur, name)
	}
	return err
}

const cleanPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// timeProc runs argv and returns the wall time from start to the end of
// wait, its stdout, and an error unless it exited 0.
func timeProc(env []string, argv ...string) (time.Duration, string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{cleanPath}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if err != nil {
		return d, stdout.String(), fmt.Errorf("%q: %v: %s", argv, err, stderr.String())
	}
	return d, stdout.String(), nil
}

// variant is one timed thing. pre is the scheduler it needs active; check
// validates the output, so a variant cannot silently measure something else.
type variant struct {
	name  string
	pre   string
	run   func() (time.Duration, string, error)
	check func(out string) error
	// fork: for a process that changes nothing, the same process timed a
	// second way, by forkexec (fork, as udevd starts RUN+= programs); nil
	// for the in-process writes and for the changes.
	fork func() (time.Duration, error)
}

func wantOut(want string) func(string) error {
	return func(got string) error {
		if got != want {
			return fmt.Errorf("output %q, want %q", got, want)
		}
		return nil
	}
}

func (b *bench) main() error {
	b.started = time.Now()
	b.loadFrom = loadavg()
	b.samples = map[string][]time.Duration{}
	b.forkSamples = map[string][]time.Duration{}
	if ents, err := os.ReadDir("/sys/block"); err == nil {
		b.realDisk = len(ents)
	}
	var err error
	if b.rootDir, err = findRoot(*root); err != nil {
		return err
	}
	b.cgo = filepath.Join(b.rootDir, "bin", "iosched")
	b.static = filepath.Join(b.rootDir, "bin", "iosched-static")
	for _, p := range []string{b.cgo, b.static} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%v: run `make build` first", err)
		}
	}
	if b.tmp, err = os.MkdirTemp("", "helperbench-"); err != nil {
		return err
	}
	if err := b.buildFloors(); err != nil {
		return err
	}
	if b.disk, err = b.attach(*diskSize); err != nil {
		return err
	}
	b.sched = b.queue("scheduler")
	real, err := filepath.EvalSymlinks("/sys/block/" + b.disk.name)
	if err != nil {
		return err
	}
	b.devpath = strings.TrimPrefix(real, "/sys")
	fmt.Fprintf(os.Stderr, "helperbench: measuring %s (%s), %d rounds\n", b.disk.dev, b.devpath, *runs)

	if err := b.singleDisk(); err != nil {
		return err
	}
	status, err := b.statusScaling()
	if err != nil {
		return err
	}
	report := b.report(status)
	fmt.Print(report)
	dst := *out
	if !filepath.IsAbs(dst) {
		dst = filepath.Join(b.rootDir, dst)
	}
	if err := os.WriteFile(dst, []byte(report), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "helperbench: wrote %s\n", dst)
	return nil
}

// Variant names, in report order.
const (
	vWrite     = "(a) write(2) \"none\" on none, in-process"
	vShWrite   = "(a) sh -c 'echo none > F'"
	vSetCgo    = "(b) iosched set, nothing to do (cgo)"
	vSetStatic = "(b) iosched set, nothing to do (static)"
	vChgUp     = "(c) iosched set none -> mq-deadline (cgo)"
	vChgDown   = "(c) iosched set mq-deadline -> none (cgo)"
	vShCmp     = "(d) sh -c 'grep -q \"\\[none\\]\" F \\|\\| echo none > F'"
	vUdevCgo   = "udev: iosched udev no-op (cgo)"
	vUdevSt    = "udev: iosched udev no-op (static)"
	vCat       = "(f) cat F"
	vTrue      = "(f) /bin/true"
	vFloorSt   = "(f) empty Go program (static)"
	vFloorCgo  = "(f) empty Go program (cgo, libudev)"
	vGoCatSt   = "(f) Go cat F (static)"
	vGoCatCgo  = "(f) Go cat F (cgo, libudev)"
	vAttrWrite = "attr: write(2) of rotational's value, in-process"
	vAttrSt    = "attr: iosched set rotational=V, nothing to do (static)"
	vAttrCgo   = "attr: iosched set rotational=V, nothing to do (cgo)"
)

// buildFloors builds gofloor the way `make build` builds the two iosched
// binaries, and forkexec, into the benchmark's temporary directory.
func (b *bench) buildFloors() error {
	b.floorCgo = filepath.Join(b.tmp, "gofloor-cgo")
	b.floorSt = filepath.Join(b.tmp, "gofloor-static")
	for _, f := range []struct{ out, cgo string }{{b.floorCgo, "1"}, {b.floorSt, "0"}} {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", f.out, "./bench/helperbench/gofloor")
		cmd.Dir = b.rootDir
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+f.cgo)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %w: %s", f.out, err, out)
		}
	}
	b.forkexec = filepath.Join(b.tmp, "forkexec")
	cc := exec.Command("cc", "-O2", "-o", b.forkexec, "bench/helperbench/forkexec/forkexec.c")
	cc.Dir = b.rootDir
	if out, err := cc.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %w: %s", b.forkexec, err, out)
	}
	return nil
}

func (b *bench) singleDisk() error {
	name := b.disk.name
	noopLine := name + ": none already active\n"
	rot, err := os.ReadFile(b.queue("rotational"))
	if err != nil {
		return err
	}
	b.rot = strings.TrimSpace(string(rot))
	attrNoop := fmt.Sprintf("%s: rotational %s already set\n", name, b.rot)
	if err := b.ensure("none"); err != nil {
		return err
	}
	line, err := os.ReadFile(b.sched)
	if err != nil {
		return err
	}
	b.schedLine = string(line)
	udevEnv := []string{"ACTION=change", "SUBSYSTEM=block", "DEVTYPE=disk", "DEVPATH=" + b.devpath,
		"DEVNAME=" + b.disk.dev, "IOSCHED_SCHEDULER=none"}
	// change: a process that writes, timed by os/exec only.
	change := func(name, pre string, check func(string) error, argv ...string) variant {
		return variant{name, pre, func() (time.Duration, string, error) { return timeProc(nil, argv...) }, check, nil}
	}
	// noop: a process that changes nothing, timed both ways.
	noop := func(name string, env []string, check func(string) error, argv ...string) variant {
		return variant{name, "none", func() (time.Duration, string, error) { return timeProc(env, argv...) }, check,
			func() (time.Duration, error) { return b.timeFork(env, argv...) }}
	}
	vs := []variant{
		{vWrite, "none", b.inProcessWrite, wantOut(""), nil},
		noop(vShWrite, nil, wantOut(""), "sh", "-c", "echo none > "+b.sched),
		noop(vSetCgo, nil, wantOut(noopLine), b.cgo, "set", name, "none"),
		noop(vSetStatic, nil, wantOut(noopLine), b.static, "set", name, "none"),
		change(vChgUp, "none", wantOut(name+": none -> mq-deadline\n"), b.cgo, "set", name, "mq-deadline"),
		change(vChgDown, "mq-deadline", wantOut(name+": mq-deadline -> none\n"), b.cgo, "set", name, "none"),
		noop(vShCmp, nil, wantOut(""), "sh", "-c", `grep -q '\[none\]' `+b.sched+` || echo none > `+b.sched),
		noop(vUdevCgo, udevEnv, wantOut(noopLine), b.cgo, "udev"),
		noop(vUdevSt, udevEnv, wantOut(noopLine), b.static, "udev"),
		noop(vCat, nil, func(s string) error {
			if !strings.Contains(s, "[none]") {
				return fmt.Errorf("cat printed %q", s)
			}
			return nil
		}, "cat", b.sched),
		noop(vTrue, nil, wantOut(""), "/bin/true"),
		noop(vFloorSt, nil, wantOut(""), b.floorSt),
		noop(vFloorCgo, nil, wantOut(""), b.floorCgo),
		noop(vGoCatSt, nil, wantOut(b.schedLine), b.floorSt, b.sched),
		noop(vGoCatCgo, nil, wantOut(b.schedLine), b.floorCgo, b.sched),
		{vAttrWrite, "none", b.inProcessAttrWrite, wantOut(""), nil},
		noop(vAttrSt, nil, wantOut(attrNoop), b.static, "set", name, "rotational="+b.rot),
		noop(vAttrCgo, nil, wantOut(attrNoop), b.cgo, "set", name, "rotational="+b.rot),
	}
	for _, v := range vs {
		b.order = append(b.order, v.name)
	}
	// The two changes form one unit, so the disk is back at none after it
	// and the change always alternates none -> mq-deadline -> none.
	units := [][]variant{}
	for i := 0; i < len(vs); i++ {
		if vs[i].name == vChgUp {
			units = append(units, vs[i:i+2])
			i++
			continue
		}
		units = append(units, vs[i:i+1])
	}
	// One warm-up round (page cache, module loads, first exec), untimed.
	for round := -1; round < *runs; round++ {
		for k := range units {
			u := units[(k+max(round, 0))%len(units)]
			for _, v := range u {
				if err := b.ensure(v.pre); err != nil {
					return err
				}
				d, outp, err := v.run()
				if err == nil {
					err = v.check(outp)
				}
				if err != nil {
					return fmt.Errorf("%s: %w", v.name, err)
				}
				if round >= 0 {
					b.samples[v.name] = append(b.samples[v.name], d)
				}
				if v.fork == nil {
					continue
				}
				if d, err = v.fork(); err != nil {
					return fmt.Errorf("%s (fork): %w", v.name, err)
				}
				if round >= 0 {
					b.forkSamples[v.name] = append(b.forkSamples[v.name], d)
				}
			}
		}
	}
	return b.ensure("none")
}

// timeFork runs argv under forkexec and returns the time it reports.
// forkexec does no PATH search, so argv[0] is looked up here.
func (b *bench) timeFork(env []string, argv ...string) (time.Duration, error) {
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(b.forkexec, append([]string{prog}, argv[1:]...)...)
	cmd.Env = append([]string{cleanPath}, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("forkexec %q: %v: %s", argv, err, stderr.String())
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("forkexec %q printed %q", argv, out)
	}
	return time.Duration(ns), nil
}

// queue is the path of one of the measured disk's queue attributes.
func (b *bench) queue(attr string) string {
	return "/sys/block/" + b.disk.name + "/queue/" + attr
}

// inProcessAttrWrite times one write(2) of queue/rotational's own value
// (a queue limit: it freezes the queue on kernels without the follow-up
// series), open and close untimed.
func (b *bench) inProcessAttrWrite() (time.Duration, string, error) {
	fd, err := unix.Open(b.queue("rotational"), unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, "", err
	}
	defer unix.Close(fd)
	t0 := time.Now()
	_, err = unix.Write(fd, []byte(b.rot))
	return time.Since(t0), "", err
}

// inProcessWrite times one write(2) of "none" on the measured disk's
// queue/scheduler, open and close untimed: the freeze happens in write.
func (b *bench) inProcessWrite() (time.Duration, string, error) {
	fd, err := unix.Open(b.sched, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, "", err
	}
	defer unix.Close(fd)
	t0 := time.Now()
	_, err = unix.Write(fd, []byte("none"))
	return time.Since(t0), "", err
}

// statusResult holds (e): medians per disk count and build.
type statusResult struct {
	counts  []int
	samples map[string][]time.Duration // key: fmt.Sprintf("%s/%d", build, n)
}

// statusScaling times `iosched status` over exactly 1, 8 and 64 attached
// loop devices, the measured disk among them.
func (b *bench) statusScaling() (*statusResult, error) {
	counts := []int{1, 8, 64}
	maxN := counts[len(counts)-1]
	disks := []*loop{b.disk}
	for len(disks) < maxN {
		l, err := b.attach(1 << 20)
		if err != nil {
			return nil, err
		}
		disks = append(disks, l)
	}
	dirs := map[int]string{}
	for _, n := range counts {
		dir := filepath.Join(b.tmp, fmt.Sprintf("block-%d", n))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
		for _, l := range disks[:n] {
			target, err := os.Readlink("/sys/block/" + l.name)
			if err != nil {
				return nil, err
			}
			if err := os.Symlink(target, filepath.Join(dir, l.name)); err != nil {
				return nil, err
			}
		}
		dirs[n] = dir
	}
	res := &statusResult{counts: counts, samples: map[string][]time.Duration{}}
	type job struct {
		build, bin string
		n          int
	}
	var jobs []job
	for _, n := range counts {
		jobs = append(jobs, job{"cgo", b.cgo, n}, job{"static", b.static, n})
	}
	for round := -1; round < *runs; round++ {
		for k := range jobs {
			j := jobs[(k+max(round, 0))%len(jobs)]
			if err := b.overlay(dirs[j.n]); err != nil {
				return nil, err
			}
			d, outp, err := timeProc(nil, j.bin, "status")
			uerr := b.unoverlay()
			if err != nil {
				return nil, fmt.Errorf("status over %d disks: %w", j.n, err)
			}
			if uerr != nil {
				return nil, uerr
			}
			if rows := strings.Count(outp, "\n") - 1; rows != j.n {
				return nil, fmt.Errorf("status over %d disks printed %d rows:\n%s", j.n, rows, outp)
			}
			if round >= 0 {
				key := fmt.Sprintf("%s/%d", j.build, j.n)
				res.samples[key] = append(res.samples[key], d)
			}
		}
	}
	return res, nil
}

func (b *bench) overlay(dir string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := unix.Mount(dir, "/sys/block", "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s over /sys/block (private namespace): %w", dir, err)
	}
	b.mounted = true
	return nil
}

func (b *bench) unoverlay() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := unix.Unmount("/sys/block", 0); err != nil {
		return fmt.Errorf("unmount /sys/block overlay: %w", err)
	}
	b.mounted = false
	return nil
}

type stats struct {
	n               int
	median, lo, p90 time.Duration
}

func summarize(ds []time.Duration) stats {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return stats{}
	}
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	p90 := s[int(math.Ceil(0.9*float64(n)))-1]
	return stats{n, med, s[0], p90}
}

func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 0.1:
		return fmt.Sprintf("%.4f", v)
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func ratio(a, b time.Duration) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", float64(a)/float64(b))
}

func (b *bench) report(st *statusResult) string {
	var w strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&w, format, a...) }
	sum := map[string]stats{}
	for _, name := range b.order {
		sum[name] = summarize(b.samples[name])
	}
	cat := sum[vCat].median
	p("# Helper benchmark: what setting a scheduler costs\n\n")
	p("Written by `make bench` (bench/helper-bench, which runs `go run ./bench/helperbench`); do not edit by hand.\n\n")
	p("- date: %s\n", b.started.UTC().Format("2006-01-02 15:04 MST"))
	p("- kernel: %s\n", unameR())
	p("- machine: %d CPUs (nproc), %s\n", runtime.NumCPU(), cpuModel())
	p("- load average before / after: %s / %s\n", b.loadFrom, loadavg())
	p("- command: `%s`\n", strings.Join(append([]string{"go run ./bench/helperbench"}, os.Args[1:]...), " "))
	p("- disk: one fresh loop device (%s, %d MiB sparse file), offering `%s`\n",
		b.disk.dev, *diskSize>>20, strings.TrimSpace(readOr(b.sched)))
	p("- %d timed runs per variant after one untimed warm-up round; variants interleaved round robin, the order rotating each round\n", *runs)
	p("- processes timed by wall clock from start to the end of wait, two ways (below); output captured and checked in the os/exec runs; F is /sys/block/%s/queue/scheduler, holding none unless stated\n\n", b.disk.name)

	fork := map[string]stats{}
	for name, ds := range b.forkSamples {
		fork[name] = summarize(ds)
	}
	fcat := fork[vCat].median
	p("## One disk\n\n")
	p("Two ways of starting a process, in the same rounds: Go's os/exec (vfork: the parent's side costs next to nothing, so this is the child's own cost) and forkexec (a C program's fork(2) + execve(2) + waitpid(2), as systemd-udevd starts a RUN+= program; only commands that change nothing).\n\n")
	p("| variant | runs | os/exec median ms | min ms | p90 ms | / cat | fork+exec median ms | / cat |\n")
	p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, name := range b.order {
		s := sum[name]
		fm, fr := "-", "-"
		if f, ok := fork[name]; ok {
			fm, fr = ms(f.median), ratio(f.median, fcat)
		}
		p("| %s | %d | %s | %s | %s | %s | %s | %s |\n", name, s.n, ms(s.median), ms(s.lo), ms(s.p90), ratio(s.median, cat), fm, fr)
	}
	p("\n")

	p("## (e) iosched status over N loop devices\n\n")
	p("Only the N attached loop devices are listed: /sys/block is a bind mount, in the benchmark's private mount namespace, of a directory holding just their sysfs symlinks (this machine's real /sys/block had %d entries when the benchmark started).\n\n", b.realDisk)
	p("| disks | cgo median ms | cgo min | cgo p90 | static median ms | static min | static p90 |\n")
	p("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	med := map[string]time.Duration{}
	for _, n := range st.counts {
		c := summarize(st.samples[fmt.Sprintf("cgo/%d", n)])
		s := summarize(st.samples[fmt.Sprintf("static/%d", n)])
		med[fmt.Sprintf("cgo/%d", n)], med[fmt.Sprintf("static/%d", n)] = c.median, s.median
		p("| %d | %s | %s | %s | %s | %s | %s |\n", n, ms(c.median), ms(c.lo), ms(c.p90), ms(s.median), ms(s.lo), ms(s.p90))
	}
	lo, hi := st.counts[0], st.counts[len(st.counts)-1]
	slope := map[string]time.Duration{}
	for _, build := range []string{"cgo", "static"} {
		slope[build] = (med[fmt.Sprintf("%s/%d", build, hi)] - med[fmt.Sprintf("%s/%d", build, lo)]) / time.Duration(hi-lo)
	}
	p("\nPer-disk slope, (median(%d) - median(%d)) / %d: cgo %s ms, static %s ms.\n\n", hi, lo, hi-lo, ms(slope["cgo"]), ms(slope["static"]))

	p("## cgo (libudev) or static for the udev entry point (issue item 5)\n\n")
	udevRatio := float64(sum[vUdevCgo].median) / float64(sum[vUdevSt].median)
	setRatio := float64(sum[vSetCgo].median) / float64(sum[vSetStatic].median)
	p("`iosched udev` no-op: cgo %s ms, static %s ms: **cgo / static = %.2fx** (`iosched set` no-op: %.2fx). ",
		ms(sum[vUdevCgo].median), ms(sum[vUdevSt].median), udevRatio, setRatio)
	if udevRatio > 1.2 {
		p("Above the 1.2x threshold: the udev entry point ships as its own static binary.\n\n")
	} else {
		p("Within the 1.2x threshold: one binary would do.\n\n")
	}
	p("| binary | bytes | MiB | links |\n| --- | ---: | ---: | --- |\n")
	for _, bin := range []string{b.cgo, b.static} {
		size := int64(-1)
		if fi, err := os.Stat(bin); err == nil {
			size = fi.Size()
		}
		p("| %s | %d | %.2f | %s |\n", strings.TrimPrefix(bin, b.rootDir+"/"), size, float64(size)/(1<<20), linkage(bin))
	}
	p("\nBoth are built stripped (`-ldflags='-s -w'`, `-trimpath`) by `make build`.\n\n")

	p("## Against the issue's targets\n\n")
	// within2x: "os/exec X (verdict), fork+exec Y (verdict)" for variant v.
	within2x := func(v string) string {
		o, f := sum[v].median, fork[v].median
		return fmt.Sprintf("%s with os/exec (%s), %s with fork+exec (%s)", ratio(o, cat), verdict(o <= 2*cat), ratio(f, fcat), verdict(f <= 2*fcat))
	}
	setSt, setCgo := sum[vSetStatic].median, sum[vSetCgo].median
	p("- (b) at most 2x cat: iosched set no-op / cat = static (the build udev runs) %s; cgo %s\n", within2x(vSetStatic), within2x(vSetCgo))
	p("  - `iosched udev` no-op / cat = static %s; cgo %s\n", within2x(vUdevSt), within2x(vUdevCgo))
	// both: "X with os/exec, Y with fork+exec", no verdict: a floor is no target.
	both := func(v string) string {
		return fmt.Sprintf("%s with os/exec, %s with fork+exec", ratio(sum[v].median, cat), ratio(fork[v].median, fcat))
	}
	p("  - the floors of any Go helper: an empty Go program / cat = static %s; cgo %s. A Go cat of F / cat = static %s; cgo %s\n",
		both(vFloorSt), both(vFloorCgo), both(vGoCatSt), both(vGoCatCgo))
	p("- (b) below (a): set no-op %s ms static, %s ms cgo vs in-process write(2) %s ms and sh write %s ms: %s\n",
		ms(setSt), ms(setCgo), ms(sum[vWrite].median), ms(sum[vShWrite].median), verdict(max(setSt, setCgo) < sum[vWrite].median))
	p("- (e) under 0.1 ms a disk: static %s ms %s, cgo %s ms %s\n", ms(slope["static"]), verdict(slope["static"] < 100*time.Microsecond),
		ms(slope["cgo"]), verdict(slope["cgo"] < 100*time.Microsecond))
	attrSt, attrCgo := sum[vAttrSt].median, sum[vAttrCgo].median
	p("- issue 5, the attribute no-op (iosched set rotational=V) at most 2x cat: static %s; cgo %s\n", within2x(vAttrSt), within2x(vAttrCgo))
	p("- issue 5, the attribute no-op below a raw unchanged write: %s ms static, %s ms cgo vs write(2) %s ms: %s\n",
		ms(attrSt), ms(attrCgo), ms(sum[vAttrWrite].median), verdict(max(attrSt, attrCgo) < sum[vAttrWrite].median))
	fi, _ := os.Stat(b.cgo)
	p("- bin/iosched under 4 MB stripped: %d bytes: %s\n", fi.Size(), verdict(fi.Size() < 4_000_000))
	return w.String()
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// linkage says whether bin needs a dynamic loader and libudev.
func linkage(bin string) string {
	f, err := os.Open(bin)
	if err != nil {
		return "?"
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, 64<<20))
	switch {
	case bytes.Contains(data, []byte("libudev.so.1")):
		return "dynamic, libudev.so.1"
	case bytes.Contains(data, []byte("ld-linux")):
		return "dynamic"
	}
	return "static"
}

func readOr(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "?"
	}
	return string(b)
}

func unameR() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "?"
	}
	return unix.ByteSliceToString(u.Release[:])
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func findRoot(flagRoot string) (string, error) {
	if flagRoot != "" {
		return filepath.Abs(flagRoot)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			bytes.Contains(b, []byte("module github.com/iosched/iosched\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root not found: run from the repository or pass -root")
		}
		dir = parent
	}
}
