package main

import (
	"debug/elf"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/iosched/iosched/helper/sysfs"
	"golang.org/x/sys/unix"
)

// hostInfo is the machine the run measured, read before the first run.
type hostInfo struct {
	started   time.Time
	load      string // /proc/loadavg's three averages
	realDisks int    // entries in /sys/block before we attached any
}

func readHost() hostInfo {
	h := hostInfo{started: time.Now(), load: loadavg()}
	if ents, err := os.ReadDir(sysfs.Default.Path("block")); err == nil {
		h.realDisks = len(ents)
	}
	return h
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

// target is one target of docs/targets.md as this run measured it: a
// result line of test/bench/helper.test (test/lib/ktap.sh's protocol).
type target struct {
	name string
	ok   bool
}

// check records the target name and returns its word in the report,
// the protocol's: "ok" or "not ok".
func (b *bench) check(name string, ok bool) string {
	b.targets = append(b.targets, target{name, ok})
	if ok {
		return "ok"
	}
	return "not ok"
}

// writeTargets lists the targets for test/bench/helper.test, one a line:
// "ok NAME" or "fail NAME" (targets_report in test/lib/host.sh).
func writeTargets(w io.Writer, ts []target) error {
	for _, t := range ts {
		word := "fail"
		if t.ok {
			word = "ok"
		}
		if _, err := fmt.Fprintf(w, "%s %s\n", word, t.name); err != nil {
			return err
		}
	}
	return nil
}

// report renders the markdown that -out receives.
func (b *bench) report() string {
	var w strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&w, format, a...) }
	sum, fork := map[string]stats{}, map[string]stats{}
	for _, name := range b.results.order {
		sum[name] = summarize(b.results.samples[name])
	}
	for name, ds := range b.results.forkSamples {
		fork[name] = summarize(ds)
	}
	cat, fcat := sum[vCat].median, fork[vCat].median
	sched := b.disk.q.Path("scheduler")
	line, _ := os.ReadFile(sched)

	p("# Helper benchmark: what setting a scheduler costs\n\n")
	p("Written by `make bench` (`test/check bench/helper`, which runs `go run ./bench/helperbench`); do not edit by hand. docs/targets.md says where each target comes from.\n\n")
	p("- date: %s\n", b.host.started.UTC().Format("2006-01-02 15:04 MST"))
	p("- kernel: %s\n", unameR())
	p("- machine: %d CPUs (nproc), %s\n", runtime.NumCPU(), cpuModel())
	p("- load average before / after: %s / %s\n", b.host.load, loadavg())
	p("- command: `%s`\n", command())
	p("- disk: one fresh loop device (%s, %d MiB sparse file), offering `%s`\n",
		b.disk.dev.Node(), *diskSize>>20, strings.TrimSpace(string(line)))
	p("- %d timed runs per variant after one untimed warm-up round; variants interleaved round robin, the order rotating each round\n", *runs)
	p("- processes timed by wall clock from start to the end of wait, two ways (below); output captured and checked in the os/exec runs; F is %s, holding none unless stated\n\n", sched)

	p("## One disk\n\n")
	p("Two ways of starting a process, in the same rounds: Go's os/exec (vfork: the parent's side costs next to nothing, so this is the child's own cost) and forkexec (a C program's fork(2) + execve(2) + waitpid(2), as systemd-udevd starts a RUN+= program; only commands that change nothing).\n\n")
	p("| variant | runs | os/exec median ms | min ms | p90 ms | / cat | fork+exec median ms | / cat |\n")
	p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, name := range b.results.order {
		s := sum[name]
		fm, fr := "-", "-"
		if f, ok := fork[name]; ok {
			fm, fr = ms(f.median), ratio(f.median, fcat)
		}
		p("| %s | %d | %s | %s | %s | %s | %s | %s |\n", name, s.n, ms(s.median), ms(s.lo), ms(s.p90), ratio(s.median, cat), fm, fr)
	}
	p("\n")

	st := b.status
	p("## iosched status over N loop devices\n\n")
	p("Only the N attached loop devices are listed: /sys/block is a bind mount, in the benchmark's private mount namespace, of a directory holding just their sysfs symlinks (this machine's real /sys/block had %d entries when the benchmark started).\n\n", b.host.realDisks)
	p("| disks | cgo median ms | cgo min | cgo p90 | static median ms | static min | static p90 |\n")
	p("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, n := range statusCounts {
		c, s := summarize(st.samples[statusKey("cgo", n)]), summarize(st.samples[statusKey("static", n)])
		p("| %d | %s | %s | %s | %s | %s | %s |\n", n, ms(c.median), ms(c.lo), ms(c.p90), ms(s.median), ms(s.lo), ms(s.p90))
	}
	lo, hi := statusCounts[0], statusCounts[len(statusCounts)-1]
	slopeCgo, slopeSt := st.slope("cgo"), st.slope("static")
	p("\nPer-disk slope, (median(%d) - median(%d)) / %d: cgo %s ms, static %s ms.\n\n", hi, lo, hi-lo, ms(slopeCgo), ms(slopeSt))

	p("## cgo (libudev) or static for the udev entry point\n\n")
	udevRatio := float64(sum[vUdevCgo].median) / float64(sum[vUdevSt].median)
	setRatio := float64(sum[vSetCgo].median) / float64(sum[vSetStatic].median)
	p("`iosched udev` no-op: cgo %s ms, static %s ms: **cgo / static = %.2fx** (`iosched set` no-op: %.2fx). ",
		ms(sum[vUdevCgo].median), ms(sum[vUdevSt].median), udevRatio, setRatio)
	if udevRatio > udevCgoOverStatic {
		p("Above the %.1fx threshold: the udev entry point ships as its own static binary.\n\n", udevCgoOverStatic)
	} else {
		p("Within the %.1fx threshold: one binary would do.\n\n", udevCgoOverStatic)
	}
	p("| binary | bytes | MiB | links |\n| --- | ---: | ---: | --- |\n")
	for _, bin := range []string{b.bins.cgo, b.bins.static} {
		size := int64(-1)
		if fi, err := os.Stat(bin); err == nil {
			size = fi.Size()
		}
		p("| %s | %d | %.2f | %s |\n", strings.TrimPrefix(bin, b.root+"/"), size, float64(size)/(1<<20), linkage(bin))
	}
	p("\nBoth are built stripped (`-ldflags='-s -w'`, `-trimpath`) by `make build`.\n\n")

	p("## Against docs/targets.md\n\n")
	// within: "X with os/exec (ok), Y with fork+exec (not ok); per cat
	// X', Y'" for variant v against goCat, the Go cat F floor of the same
	// build, each a target; the ratio to cat is printed, not judged.
	within := func(v, goCat string) string {
		o, f := sum[v].median, fork[v].median
		floorO, floorF := sum[goCat].median, fork[goCat].median
		return fmt.Sprintf("%s with os/exec (%s), %s with fork+exec (%s); per cat %s and %s",
			ratio(o, floorO), b.check(fmt.Sprintf("%s at most %.1fx %s with os/exec: %s", v, noopPerGoCat, goCat, ratio(o, floorO)), float64(o) <= noopPerGoCat*float64(floorO)),
			ratio(f, floorF), b.check(fmt.Sprintf("%s at most %.1fx %s with fork+exec: %s", v, noopPerGoCat, goCat, ratio(f, floorF)), float64(f) <= noopPerGoCat*float64(floorF)),
			ratio(o, cat), ratio(f, fcat))
	}
	p("- iosched set with nothing to do at most %.1fx the Go cat of F of its build: static (the build udev runs) %s; cgo %s\n",
		noopPerGoCat, within(vSetStatic, vGoCatSt), within(vSetCgo, vGoCatCgo))
	p("  - `iosched udev` with nothing to do: static %s; cgo %s\n", within(vUdevSt, vGoCatSt), within(vUdevCgo, vGoCatCgo))
	// both: "X with os/exec, Y with fork+exec", no verdict: a floor is no target.
	both := func(v string) string {
		return fmt.Sprintf("%s with os/exec, %s with fork+exec", ratio(sum[v].median, cat), ratio(fork[v].median, fcat))
	}
	p("  - the floors of any Go helper, per cat: an empty Go program static %s; cgo %s. A Go cat of F static %s; cgo %s\n",
		both(vFloorSt), both(vFloorCgo), both(vGoCatSt), both(vGoCatCgo))
	setSt, setCgo := sum[vSetStatic].median, sum[vSetCgo].median
	p("- iosched set with nothing to do below the unchanged write it avoids: %s ms static, %s ms cgo vs in-process write(2) %s ms and sh write %s ms: %s\n",
		ms(setSt), ms(setCgo), ms(sum[vWrite].median), ms(sum[vShWrite].median),
		b.check(fmt.Sprintf("iosched set with nothing to do below an unchanged write(2) of scheduler: %s ms static, %s ms cgo, write %s ms", ms(setSt), ms(setCgo), ms(sum[vWrite].median)), max(setSt, setCgo) < sum[vWrite].median))
	p("- iosched status under %s ms a disk: static %s ms %s, cgo %s ms %s\n", ms(statusPerDisk),
		ms(slopeSt), b.check(fmt.Sprintf("iosched status (static) under %s ms a disk: %s ms", ms(statusPerDisk), ms(slopeSt)), slopeSt < statusPerDisk),
		ms(slopeCgo), b.check(fmt.Sprintf("iosched status (cgo) under %s ms a disk: %s ms", ms(statusPerDisk), ms(slopeCgo)), slopeCgo < statusPerDisk))
	attrSt, attrCgo := sum[vAttrSt].median, sum[vAttrCgo].median
	p("- the attribute no-op (iosched set rotational=V) at most %.1fx the Go cat of F of its build: static %s; cgo %s\n",
		noopPerGoCat, within(vAttrSt, vGoCatSt), within(vAttrCgo, vGoCatCgo))
	p("- the attribute no-op below the unchanged write it avoids: %s ms static, %s ms cgo vs write(2) %s ms: %s\n",
		ms(attrSt), ms(attrCgo), ms(sum[vAttrWrite].median),
		b.check(fmt.Sprintf("the attribute no-op below an unchanged write(2) of rotational: %s ms static, %s ms cgo, write %s ms", ms(attrSt), ms(attrCgo), ms(sum[vAttrWrite].median)), max(attrSt, attrCgo) < sum[vAttrWrite].median))
	size := int64(-1)
	if fi, err := os.Stat(b.bins.cgo); err == nil {
		size = fi.Size()
	}
	p("- bin/iosched under %d MB stripped: %d bytes: %s\n", maxBinary/1_000_000, size,
		b.check(fmt.Sprintf("bin/iosched under %d MB stripped: %d bytes", maxBinary/1_000_000, size), size >= 0 && size < maxBinary))
	return w.String()
}

// linkage says whether bin needs a dynamic loader (a PT_INTERP program
// header) and libudev (a DT_NEEDED entry).
func linkage(bin string) string {
	f, err := elf.Open(bin)
	if err != nil {
		return "?"
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		return "?"
	}
	if slices.Contains(libs, "libudev.so.1") {
		return "dynamic, libudev.so.1"
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return "dynamic"
		}
	}
	return "static"
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
