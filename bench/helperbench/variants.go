package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Variant names, in report order. The prefix says what the row is for:
// raw writes the helper avoids, the helper (set, udev) with nothing to do
// and with a change, the shell alternatives, the floors of any process,
// and the same for a queue-limit attribute.
const (
	vWrite     = "raw: unchanged write(2) of scheduler (none), in-process"
	vShWrite   = "raw: sh -c 'echo none > F'"
	vSetCgo    = "helper: iosched set, nothing to do (cgo)"
	vSetStatic = "helper: iosched set, nothing to do (static)"
	vChgUp     = "change: iosched set none -> mq-deadline (cgo)"
	vChgDown   = "change: iosched set mq-deadline -> none (cgo)"
	vShCmp     = "shell compares first: sh -c 'grep -q \"\\[none\\]\" F \\|\\| echo none > F'"
	vUdevCgo   = "udev: iosched udev, nothing to do (cgo)"
	vUdevSt    = "udev: iosched udev, nothing to do (static)"
	vCat       = "floor: cat F"
	vTrue      = "floor: /bin/true"
	vFloorSt   = "floor: empty Go program (static)"
	vFloorCgo  = "floor: empty Go program (cgo, libudev)"
	vGoCatSt   = "floor: Go cat F (static)"
	vGoCatCgo  = "floor: Go cat F (cgo, libudev)"
	vAttrWrite = "attr raw: unchanged write(2) of rotational, in-process"
	vAttrSt    = "attr helper: iosched set rotational=V, nothing to do (static)"
	vAttrCgo   = "attr helper: iosched set rotational=V, nothing to do (cgo)"
)

// binaries are the programs the variants run.
type binaries struct {
	cgo, static string // bin/iosched, bin/iosched-static
	floorCgo    string // gofloor built like bin/iosched
	floorStatic string // gofloor built like bin/iosched-static
	forkexec    string // bench/helperbench/forkexec, built with cc
}

// build finds the two iosched builds of `make build` under root and builds
// gofloor the same two ways, and forkexec, into tmp.
func build(root, tmp string) (binaries, error) {
	b := binaries{
		cgo:         filepath.Join(root, "bin", "iosched"),
		static:      filepath.Join(root, "bin", "iosched-static"),
		floorCgo:    filepath.Join(tmp, "gofloor-cgo"),
		floorStatic: filepath.Join(tmp, "gofloor-static"),
		forkexec:    filepath.Join(tmp, "forkexec"),
	}
	for _, p := range []string{b.cgo, b.static} {
		if _, err := os.Stat(p); err != nil {
			return b, fmt.Errorf("%w: run `make build` first", err)
		}
	}
	for _, f := range []struct{ out, cgo string }{{b.floorCgo, "1"}, {b.floorStatic, "0"}} {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", f.out, "./bench/helperbench/gofloor")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+f.cgo)
		if out, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("build %s: %w: %s", f.out, err, out)
		}
	}
	cc := exec.Command("cc", "-O2", "-o", b.forkexec, "bench/helperbench/forkexec/forkexec.c")
	cc.Dir = root
	if out, err := cc.CombinedOutput(); err != nil {
		return b, fmt.Errorf("build %s: %w: %s", b.forkexec, err, out)
	}
	return b, nil
}

// results are the timed samples of the single-disk variants.
type results struct {
	samples map[string][]time.Duration // os/exec (or in-process) timings
	// forkSamples: the same variants timed by forkexec (fork + exec).
	forkSamples map[string][]time.Duration
	order       []string // variant names in report order
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

// variants lists the single-disk variants on the measured disk, which
// must hold none.
func (b *bench) variants() ([]variant, error) {
	d, bins := b.disk, b.bins
	name, sched := d.q.Name(), d.q.Path("scheduler")
	line, err := os.ReadFile(sched)
	if err != nil {
		return nil, err
	}
	rot, err := d.q.Read("rotational")
	if err != nil {
		return nil, err
	}
	noopLine := name + ": none already active\n"
	attrNoop := fmt.Sprintf("%s: rotational %s already set\n", name, rot)
	udevEnv := []string{"ACTION=change", "SUBSYSTEM=block", "DEVTYPE=disk", "DEVPATH=" + d.devpath,
		"DEVNAME=" + d.dev.Node(), "IOSCHED_SCHEDULER=none"}
	// change: a process that writes, timed by os/exec only.
	change := func(name, pre string, check func(string) error, argv ...string) variant {
		return variant{name, pre, func() (time.Duration, string, error) { return timeProc(nil, argv...) }, check, nil}
	}
	// noop: a process that changes nothing, timed both ways.
	noop := func(name string, env []string, check func(string) error, argv ...string) variant {
		return variant{name, "none", func() (time.Duration, string, error) { return timeProc(env, argv...) }, check,
			func() (time.Duration, error) { return timeFork(bins.forkexec, env, argv...) }}
	}
	catCheck := func(s string) error {
		if !strings.Contains(s, "[none]") {
			return fmt.Errorf("cat printed %q", s)
		}
		return nil
	}
	return []variant{
		{vWrite, "none", func() (time.Duration, string, error) { return timeWrite(sched, "none") }, wantOut(""), nil},
		noop(vShWrite, nil, wantOut(""), "sh", "-c", "echo none > "+sched),
		noop(vSetCgo, nil, wantOut(noopLine), bins.cgo, "set", name, "none"),
		noop(vSetStatic, nil, wantOut(noopLine), bins.static, "set", name, "none"),
		change(vChgUp, "none", wantOut(name+": none -> mq-deadline\n"), bins.cgo, "set", name, "mq-deadline"),
		change(vChgDown, "mq-deadline", wantOut(name+": mq-deadline -> none\n"), bins.cgo, "set", name, "none"),
		noop(vShCmp, nil, wantOut(""), "sh", "-c", `grep -q '\[none\]' `+sched+` || echo none > `+sched),
		noop(vUdevCgo, udevEnv, wantOut(noopLine), bins.cgo, "udev"),
		noop(vUdevSt, udevEnv, wantOut(noopLine), bins.static, "udev"),
		noop(vCat, nil, catCheck, "cat", sched),
		noop(vTrue, nil, wantOut(""), "/bin/true"),
		noop(vFloorSt, nil, wantOut(""), bins.floorStatic),
		noop(vFloorCgo, nil, wantOut(""), bins.floorCgo),
		noop(vGoCatSt, nil, wantOut(string(line)), bins.floorStatic, sched),
		noop(vGoCatCgo, nil, wantOut(string(line)), bins.floorCgo, sched),
		// rotational is a queue limit: its store freezes the queue on
		// kernels without the follow-up series of kernel-patches/limits/.
		{vAttrWrite, "none", func() (time.Duration, string, error) { return timeWrite(d.q.Path("rotational"), rot) }, wantOut(""), nil},
		noop(vAttrSt, nil, wantOut(attrNoop), bins.static, "set", name, "rotational="+rot),
		noop(vAttrCgo, nil, wantOut(attrNoop), bins.cgo, "set", name, "rotational="+rot),
	}, nil
}

// singleDisk runs every variant *runs times on the measured disk.
func (b *bench) singleDisk() error {
	if err := b.disk.ensure("none"); err != nil {
		return err
	}
	vs, err := b.variants()
	if err != nil {
		return err
	}
	for _, v := range vs {
		b.results.order = append(b.results.order, v.name)
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
			for _, v := range units[(k+max(round, 0))%len(units)] {
				if err := b.once(v, round >= 0); err != nil {
					return err
				}
			}
		}
	}
	return b.disk.ensure("none")
}

// once runs v one time (both ways for a no-op), keeping the samples when
// timed.
func (b *bench) once(v variant, timed bool) error {
	if err := b.disk.ensure(v.pre); err != nil {
		return err
	}
	d, outp, err := v.run()
	if err == nil {
		err = v.check(outp)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", v.name, err)
	}
	if timed {
		b.results.samples[v.name] = append(b.results.samples[v.name], d)
	}
	if v.fork == nil {
		return nil
	}
	if d, err = v.fork(); err != nil {
		return fmt.Errorf("%s (fork): %w", v.name, err)
	}
	if timed {
		b.results.forkSamples[v.name] = append(b.results.forkSamples[v.name], d)
	}
	return nil
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
		return d, stdout.String(), fmt.Errorf("%q: %w: %s", argv, err, stderr.String())
	}
	return d, stdout.String(), nil
}

// timeFork runs argv under forkexec and returns the time it reports.
// forkexec does no PATH search, so argv[0] is looked up here.
func timeFork(forkexec string, env []string, argv ...string) (time.Duration, error) {
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(forkexec, append([]string{prog}, argv[1:]...)...)
	cmd.Env = append([]string{cleanPath}, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("forkexec %q: %w: %s", argv, err, stderr.String())
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("forkexec %q printed %q", argv, out)
	}
	return time.Duration(ns), nil
}

// timeWrite times one write(2) of value to the attribute file path, open
// and close untimed: the freeze happens in write.
func timeWrite(path, value string) (time.Duration, string, error) {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, "", fmt.Errorf("open %s: %w", path, err)
	}
	defer unix.Close(fd)
	t0 := time.Now()
	_, err = unix.Write(fd, []byte(value))
	d := time.Since(t0)
	if err != nil {
		return d, "", fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return d, "", nil
}
