package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestProbe runs `iosched probe` for real: it must attach a loop device
// of its own, time the scheduler and every freezing attribute against the
// control, beside the nearest measured kernel's numbers, write nothing but
// that device's queue files (besides the loop control node, the device
// node and its unlinked backing file), and leave no device or file behind.
func TestProbe(t *testing.T) {
	b := setup(t)
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "iosched-probe-*"))
	o := run(t, true, nil, b.Static, "probe", "--runs", "3")
	if o.Code != 0 {
		t.Fatalf("probe: exit %d\nstdout:\n%s\nstderr:\n%s", o.Code, o.Stdout, o.Stderr)
	}
	m := regexp.MustCompile(`(?m)^probe: (loop\d+) on kernel \S+, median of 3 unchanged writes each$`).FindStringSubmatch(o.Stdout)
	if m == nil {
		t.Fatalf("probe: no header line naming its loop device:\n%s", o.Stdout)
	}
	loop := m[1]
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^nearest measured kernel: \S+ \(docs/kernels\.md\), in ms / freezes per write$`),
		regexp.MustCompile(`(?m)^scheduler \(\S+\) +\d+\.\d{3} ms +(yes|no) +(\d+\.\d+ / \d|not measured|absent|readonly|failed)`),
		regexp.MustCompile(`(?m)^rotational +\d+\.\d{3} ms +(yes|no) +(\d+\.\d+ / \d|not measured|absent|readonly|failed)`),
		regexp.MustCompile(`(?m)^read_ahead_kb +\d+\.\d{3} ms +(\(control\)|yes) +(\d+\.\d+ / \d|not measured|absent|readonly|failed)`),
		regexp.MustCompile(`(?m)^verdict: this kernel (does not freeze|freezes) the queue for unchanged writes`),
	} {
		if !want.MatchString(o.Stdout) {
			t.Errorf("probe output lacks %s:\n%s", want, o.Stdout)
		}
	}
	queue, err := filepath.EvalSymlinks("/sys/devices/virtual/block/" + loop)
	if err != nil {
		// Already gone with autoclear: the sysfs node of an unused loop
		// device stays, so resolve by name instead.
		queue = "/sys/devices/virtual/block/" + loop
	}
	locked := false
	for _, c := range o.Opens {
		// Its writes are under the disk's lock, as every writer's.
		if c.lockOpen() && c.Path == loop+".lock" && !c.Failed() {
			locked = true
		}
		if !c.ForWriting() {
			continue
		}
		p := c.Resolved()
		switch {
		case c.lockOpen():
		case p == "/dev/loop-control", p == "/dev/"+loop,
			strings.HasPrefix(filepath.Base(c.Path), "iosched-probe-"),
			strings.HasPrefix(p, queue+"/queue/"):
		default:
			t.Errorf("probe opened %s for writing: %s", p, c)
		}
	}
	if !locked {
		t.Errorf("probe took no lock on %s (no open of %s.lock)", loop, loop)
	}
	// Autoclear detached it when the probe closed the device.
	if b, err := os.ReadFile("/sys/block/" + loop + "/loop/backing_file"); err == nil {
		t.Errorf("%s still attached after probe, backing file %s", loop, strings.TrimSpace(string(b)))
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "iosched-probe-*"))
	if len(after) > len(before) {
		t.Errorf("probe left backing files: %v", after)
	}
}
