package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iosched/iosched/helper/jiffies"
	"github.com/iosched/iosched/helper/sysfs"
	"github.com/iosched/iosched/test/testhost"
)

// bins are the binaries under test, found relative to the repository root.
type bins struct {
	Cgo    string // bin/iosched: cgo, links libudev.so.1
	Static string // bin/iosched-static: CGO_ENABLED=0
}

// setup skips when not root and fails when a binary or tool is missing:
// CI runs as root, so a missing piece is a real failure there.
func setup(t *testing.T, tools ...string) bins {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("integration tests need root: they attach loop devices and write their queue/scheduler")
	}
	root := repoRoot(t)
	b := bins{
		Cgo:    filepath.Join(root, "bin", "iosched"),
		Static: filepath.Join(root, "bin", "iosched-static"),
	}
	for _, p := range []string{b.Cgo, b.Static} {
		st, err := os.Stat(p)
		if err != nil || st.Mode()&0o111 == 0 {
			t.Fatalf("%s is missing or not executable: run `make build` first (%v)", p, err)
		}
	}
	for _, tool := range append([]string{"losetup", "strace"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found (scripts/install-deps installs it): %v", tool, err)
		}
	}
	return b
}

// repoRoot returns the repository root above the package directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := testhost.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// loopDev is a loop device attached by the test that uses it.
type loopDev struct {
	Dev     string // /dev/loop3
	Name    string // loop3
	Sched   string // /sys/block/loop3/queue/scheduler
	Real    string // Sched with symlinks resolved: /sys/devices/virtual/block/loop3/queue/scheduler
	Devpath string // udev's DEVPATH: /devices/virtual/block/loop3
}

var loopName = regexp.MustCompile(`^/dev/(loop[0-9]+)$`)

// newLoop attaches a 64 MiB file in t.TempDir() to a free loop device.
// label "" leaves the file unpartitioned; "gpt" or "dos" writes one
// partition spanning the disk with sfdisk and attaches with -P. Cleanup
// restores the scheduler found at attach time and detaches, also when the
// test fails.
func newLoop(t *testing.T, label string) *loopDev {
	t.Helper()
	img := filepath.Join(t.TempDir(), "disk.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	args := []string{"-f", "--show"}
	if label != "" {
		cmd := exec.Command("sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", img)
		cmd.Stdin = strings.NewReader("label: " + label + "\n,\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sfdisk %s: %v\n%s", img, err, out)
		}
		args = append(args, "-P")
	}
	return attachLoop(t, img, args...)
}

// attachLoop runs losetup ARGS IMG (ARGS with --show) and registers the
// cleanup that restores the scheduler and detaches.
func attachLoop(t *testing.T, img string, args ...string) *loopDev {
	t.Helper()
	out, err := exec.Command("losetup", append(args, img)...).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup %s %s: %v\n%s", strings.Join(args, " "), img, err, out)
	}
	dev := strings.TrimSpace(string(out))
	m := loopName.FindStringSubmatch(dev)
	if m == nil {
		t.Fatalf("losetup --show printed %q, not /dev/loopN", dev)
	}
	d := &loopDev{Dev: dev, Name: m[1], Sched: "/sys/block/" + m[1] + "/queue/scheduler"}
	orig, origErr := activeErr(d)
	t.Cleanup(func() { d.release(t, img, orig) })
	if origErr != nil {
		t.Fatal(origErr)
	}
	if d.Real, err = filepath.EvalSymlinks(d.Sched); err != nil {
		t.Fatal(err)
	}
	d.Devpath = strings.TrimPrefix(filepath.Dir(filepath.Dir(d.Real)), "/sys")
	t.Logf("attached %s (%s, scheduler %s) to %s", dev, d.Devpath, orig, img)
	return d
}

// release puts back the scheduler found at attach time, since a loop
// device keeps its queue (and elevator) across detach and attach, then
// detaches. It first checks the device still holds our file.
func (d *loopDev) release(t *testing.T, img, orig string) {
	backing, err := os.ReadFile("/sys/block/" + d.Name + "/loop/backing_file")
	if err != nil || strings.TrimSpace(string(backing)) != img {
		t.Errorf("not detaching %s: backing file %q, want %q (%v)", d.Dev, strings.TrimSpace(string(backing)), img, err)
		return
	}
	if cur, err := activeErr(d); orig != "" && err == nil && cur != orig {
		if err := os.WriteFile(d.Sched, []byte(orig), 0); err != nil {
			t.Errorf("restore %s to %s: %v", d.Sched, orig, err)
		}
	}
	if out, err := exec.Command("losetup", "-d", d.Dev).CombinedOutput(); err != nil {
		t.Errorf("losetup -d %s: %v\n%s", d.Dev, err, out)
	}
}

// Part returns the first partition's kernel name ("loop3p1"), waiting for
// its /dev node. The kernel scans the table while losetup -P attaches; a
// kernel built without partition parsers (this machine kind's host kernel
// has neither CONFIG_MSDOS_PARTITION nor CONFIG_EFI_PARTITION) finds
// nothing, so then `partx -a` reads the table in userspace and adds the
// partition with the BLKPG ioctl. Detach removes it either way.
func (d *loopDev) Part(t *testing.T) string {
	t.Helper()
	name := d.Name + "p1"
	if _, err := os.Stat("/sys/class/block/" + name); err != nil {
		out, err := exec.Command("partx", "-a", d.Dev).CombinedOutput()
		if err != nil {
			t.Fatalf("kernel found no partition on %s, and partx -a %s: %v\n%s", d.Dev, d.Dev, err, out)
		}
		t.Logf("kernel found no partition on %s; added it with partx -a", d.Dev)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, errDev := os.Stat("/dev/" + name)
		_, errSys := os.Stat("/sys/class/block/" + name)
		if errDev == nil && errSys == nil {
			return name
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition %s did not appear: %v; %v", name, errDev, errSys)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var activeRE = regexp.MustCompile(`\[([^\]\s]+)\]`)

// parseLine is the test's own, deliberately small, reading of
// queue/scheduler: the names offered and the single bracketed one.
func parseLine(s string) (active string, offered []string, err error) {
	m := activeRE.FindAllStringSubmatch(s, -1)
	if len(m) != 1 {
		return "", nil, fmt.Errorf("scheduler line %q: want exactly one [active] name", s)
	}
	for _, f := range strings.Fields(s) {
		offered = append(offered, strings.Trim(f, "[]"))
	}
	return m[0][1], offered, nil
}

func activeErr(d *loopDev) (string, error) {
	b, err := os.ReadFile(d.Sched)
	if err != nil {
		return "", err
	}
	a, _, err := parseLine(string(b))
	return a, err
}

// offeredBy reads the schedulers the disk offers.
func offeredBy(t *testing.T, d *loopDev) []string {
	t.Helper()
	line, err := readFile(d.Sched)
	if err != nil {
		t.Fatal(err)
	}
	_, offered, err := parseLine(line)
	if err != nil {
		t.Fatal(err)
	}
	return offered
}

// active reads the disk's active scheduler.
func active(t *testing.T, d *loopDev) string {
	t.Helper()
	a, err := activeErr(d)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// force sets the disk's scheduler as test setup (compare first, like the
// helper, so a fixture never freezes the queue for nothing).
func force(t *testing.T, d *loopDev, name string) {
	t.Helper()
	if active(t, d) == name {
		return
	}
	if err := os.WriteFile(d.Sched, []byte(name), 0); err != nil {
		t.Fatalf("setup: write %s to %s: %v", name, d.Sched, err)
	}
	if got := active(t, d); got != name {
		t.Fatalf("setup: %s reads %s after writing %s", d.Sched, got, name)
	}
}

// udevEnv is the environment udev gives a RUN+= program for a block event.
func udevEnv(action, devtype, devpath, policy string) []string {
	return []string{
		"ACTION=" + action,
		"SUBSYSTEM=block",
		"DEVTYPE=" + devtype,
		"DEVPATH=" + devpath,
		"DEVNAME=/dev/" + filepath.Base(devpath),
		"IOSCHED_SCHEDULER=" + policy,
	}
}

// outcome is what one run of the helper did.
type outcome struct {
	Code   int
	Stdout string
	Stderr string
	Opens  []openCall // nil unless traced
	Trace  string     // raw trace, for failure messages
}

const baseEnv = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// run runs argv with a clean environment plus env and returns its outcome.
// With traced, it runs under strace -f and parses every open of the run.
func run(t *testing.T, traced bool, env []string, argv ...string) outcome {
	t.Helper()
	o, err := runE(t.TempDir(), nil, traced, env, argv...)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// runE is run for goroutines other than the test's own: it returns errors
// instead of failing the test. The trace goes into dir. wrap, if any, is
// a command prefix that runs before strace and is not traced.
func runE(dir string, wrap []string, traced bool, env []string, argv ...string) (outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var traceFile string
	if traced {
		traceFile = filepath.Join(dir, "trace")
		argv = append([]string{"strace", "-f", "-qq", "-e", "trace=open,openat,openat2,creat,truncate",
			"-o", traceFile, "--"}, argv...)
	}
	argv = append(slices.Clone(wrap), argv...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append([]string{baseEnv}, env...)
	// A grandchild stuck in the kernel (a hung queue) keeps our pipes
	// open: stop waiting for them soon after the kill.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	o := outcome{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.Exited():
		o.Code = ee.ExitCode()
	case err != nil:
		return o, fmt.Errorf("%q: %v (stderr %q)", argv, err, o.Stderr)
	}
	if traced {
		b, err := os.ReadFile(traceFile)
		if err != nil {
			return o, fmt.Errorf("read strace output: %v", err)
		}
		o.Trace = string(b)
		if o.Opens, err = parseTrace(o.Trace); err != nil {
			return o, fmt.Errorf("%v\ntrace:\n%s", err, o.Trace)
		}
	}
	return o, nil
}

// openCall is one traced open, open-like or truncating system call.
type openCall struct {
	Syscall string // open, openat, openat2, creat, truncate
	Path    string // as passed, unescaped
	Args    string // everything in the parentheses but the path
	Raw     string // everything in the parentheses, as strace printed it
	Result  string // "3" or "-1 EACCES (Permission denied)"
}

var writeFlag = regexp.MustCompile(`\bO_(WRONLY|RDWR|CREAT|TRUNC)\b`)

// ForWriting reports whether the call opens (or tries to open) for
// writing, creates or truncates.
func (c openCall) ForWriting() bool {
	return c.Syscall == "creat" || c.Syscall == "truncate" || writeFlag.MatchString(c.Args)
}

// Failed reports whether the call returned an error.
func (c openCall) Failed() bool { return strings.HasPrefix(c.Result, "-1") }

// Resolved returns Path with symlinks resolved, or Path when that fails.
func (c openCall) Resolved() string {
	if r, err := filepath.EvalSymlinks(c.Path); err == nil {
		return r
	}
	return c.Path
}

func (c openCall) String() string {
	return fmt.Sprintf("%s(%s) = %s", c.Syscall, c.Raw, c.Result)
}

var (
	callLine    = regexp.MustCompile(`^(\d+)\s+(open|openat|openat2|creat|truncate)\((.*)\)\s+= (.*)$`)
	resumedLine = regexp.MustCompile(`^(\d+)\s+<\.\.\. (\w+) resumed>(.*)$`)
	otherLine   = regexp.MustCompile(`^(\d+)\s+(\w+)\(`)
	// strace attached to a new thread inside a system call it could not
	// decode (seen under load, as the Go runtime starts its threads):
	// "PID ???( <unfinished ...>", "PID ???( <detached ...>" and
	// "PID <... ??? resumed>...". No path is named, so nothing to read.
	undecoded  = regexp.MustCompile(`^\d+\s+(\?\?\?\( <(unfinished|detached) \.\.\.>|<\.\.\. \?\?\? resumed>.*)$`)
	unfinished = " <unfinished ...>"
)

// parseTrace reads `strace -f -o FILE` output: "PID call(args) = ret",
// with calls split across "<unfinished ...>" and "<... call resumed>"
// when threads interleave. Unknown lines are an error, so a change of
// strace's format cannot make the test pass by reading nothing.
func parseTrace(trace string) ([]openCall, error) {
	var calls []openCall
	pending := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(trace))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || undecoded.MatchString(line) {
			continue
		}
		if strings.HasSuffix(line, unfinished) {
			m := otherLine.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("strace line %q: no pid", line)
			}
			pending[m[1]] = strings.TrimSuffix(line, unfinished)
			continue
		}
		if m := resumedLine.FindStringSubmatch(line); m != nil {
			head, ok := pending[m[1]]
			if !ok {
				return nil, fmt.Errorf("strace line %q resumes nothing", line)
			}
			delete(pending, m[1])
			line = head + m[3]
		}
		m := callLine.FindStringSubmatch(line)
		if m == nil {
			if otherLine.MatchString(line) {
				return nil, fmt.Errorf("strace line %q: unexpected system call", line)
			}
			continue // signals ("--- SIGURG ...") and exits ("+++ exited ...")
		}
		c := openCall{Syscall: m[2], Raw: m[3], Result: m[4]}
		path, rest, err := firstQuoted(m[3])
		if err != nil {
			return nil, fmt.Errorf("strace line %q: %v", line, err)
		}
		c.Path, c.Args = path, rest
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for pid, head := range pending {
		// A call cut off by the process's exit (exit_group in another
		// thread) still tells what was asked.
		if m := callLine.FindStringSubmatch(head + ") = ?"); m != nil {
			path, rest, _ := firstQuoted(m[3])
			calls = append(calls, openCall{Syscall: m[2], Path: path, Args: rest, Raw: m[3], Result: "? (pid " + pid + " unfinished)"})
		}
	}
	return calls, nil
}

// firstQuoted returns the first C string literal in args, unescaped, and
// args without it.
func firstQuoted(args string) (string, string, error) {
	i := strings.IndexByte(args, '"')
	if i < 0 {
		return "", args, fmt.Errorf("no path in %q", args)
	}
	j := i + 1
	for ; j < len(args); j++ {
		if args[j] == '\\' {
			j++
			continue
		}
		if args[j] == '"' {
			break
		}
	}
	if j >= len(args) {
		return "", args, fmt.Errorf("unterminated path in %q", args)
	}
	lit := args[i : j+1]
	path, err := strconv.Unquote(lit)
	if err != nil {
		path = lit[1 : len(lit)-1] // strace's short octal escapes: keep raw
	}
	return path, args[:i] + args[j+1:], nil
}

var (
	lockFile  = regexp.MustCompile(`^[A-Za-z0-9_.:-]+\.lock$`)
	dataWrite = regexp.MustCompile(`\bO_(WRONLY|RDWR|TRUNC)\b`)
)

// lockOpen reports whether the call is the helper creating or opening its
// per-disk lock file (helper/disklock): openat relative to the lock
// directory's descriptor, read-only. The file is never written.
func (c openCall) lockOpen() bool {
	return c.Syscall == "openat" && !strings.HasPrefix(c.Raw, "AT_FDCWD") &&
		lockFile.MatchString(c.Path) && !dataWrite.MatchString(c.Args)
}

// writeOpens returns the resolved paths of every open for writing in o's
// trace, failed attempts included, but for the lock file.
func (o outcome) writeOpens() []string {
	got := []string{}
	for _, c := range o.Opens {
		if c.ForWriting() && !c.lockOpen() {
			got = append(got, c.Resolved())
		}
	}
	return got
}

// readsOf reports whether the trace holds a successful read-only open of
// path (after resolving symlinks): proof the trace saw the helper work.
func (o outcome) readsOf(path string) bool {
	for _, c := range o.Opens {
		if !c.ForWriting() && !c.Failed() && c.Resolved() == path {
			return true
		}
	}
	return false
}

// openLog renders the traced opens for a failure message.
func (o outcome) openLog() string {
	var b strings.Builder
	for _, c := range o.Opens {
		fmt.Fprintf(&b, "\t%v\n", c)
	}
	return b.String()
}

// got is the part of an outcome that tables compare.
type got struct {
	Code   int
	Stdout string
}

func (o outcome) got() got { return got{o.Code, o.Stdout} }

// udevLink returns a symlink named iosched-udev to bin in a fresh directory.
func udevLink(t *testing.T, bin string) string {
	t.Helper()
	link := filepath.Join(t.TempDir(), "iosched-udev")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	return link
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

// blockView returns a command prefix that runs the rest of a command in a
// private mount namespace whose /sys/block lists only the given disks, so
// `iosched status` reads the test's loop devices and nothing else: a hung
// queue elsewhere on the machine cannot hang the test.
func blockView(t *testing.T, disks ...string) []string {
	t.Helper()
	dir := t.TempDir()
	if err := testhost.BlockView(sysfs.Default, dir, disks...); err != nil {
		t.Fatal(err)
	}
	return testhost.ViewCommand(dir)
}

// hostHZ is the running kernel's HZ as the helper finds it (package
// jiffies), or 0, logged, when it cannot be found: cases that depend on
// it are then left out.
func hostHZ(t *testing.T) jiffies.HZ {
	t.Helper()
	out, err := exec.Command("uname", "-r").Output()
	if err != nil {
		t.Fatalf("uname -r: %v", err)
	}
	hz, src, err := jiffies.Find("/", strings.TrimSpace(string(out)))
	if err != nil {
		t.Logf("cases kept in jiffies left out: %v", err)
		return 0
	}
	t.Logf("HZ=%d from %s", hz, src)
	return hz
}
