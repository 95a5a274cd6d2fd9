package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/iosched/iosched/helper/queueattr"
)

// convergeCase is one ATTR=VALUE on a loop device: either the helper
// refuses it before opening anything for writing (exit 2, a message that
// names the attribute, the value and the kernel's reason), or one write
// makes it hold and the next run writes nothing.
type convergeCase struct {
	sched   string // the scheduler active for the case ("" any)
	attr    string
	value   string
	refused string // the reason the message gives; "" means it converges
	kept    string // what the attribute reads once it converged
}

// TestConverge runs a table over every attribute and scheduler tunable
// iosched knows, with values the kernel keeps, clamps, refuses and
// ignores, and counts the opens for writing with strace: zero futile
// writes.
func TestConverge(t *testing.T) {
	b := setup(t)
	d := newLoop(t, "")
	force(t, d, "none")
	q := func(attr string) string { return queueAttr(t, d, attr) }
	num := func(attr string) int {
		n, err := strconv.Atoi(q(attr))
		if err != nil {
			t.Fatalf("queue/%s: %v", attr, err)
		}
		return n
	}
	sysNum := func(rel string) int {
		s, err := readFile(filepath.Join("/sys/block", d.Name, rel))
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		return n
	}
	itoa := strconv.Itoa
	// keep is keepAttr for an attribute this kernel or device may lack
	// (io_timeout needs a driver timeout handler); its cases are skipped.
	keep := func(attr string) string {
		if _, err := os.Stat(filepath.Join("/sys/block", d.Name, "queue", attr)); err != nil {
			return ""
		}
		return keepAttr(t, d, attr)
	}

	var cases []convergeCase
	add := func(c ...convergeCase) { cases = append(cases, c...) }
	// Each attribute ends where it started, and cleanup restores it anyway.
	for _, f := range []string{"rotational", "add_random", "iostats", "stable_writes", "iostats_passthrough"} {
		orig := keep(f)
		flip := map[string]string{"0": "1", "1": "0"}[orig]
		add(convergeCase{"", f, "7", "would keep 1", ""},
			convergeCase{"", f, flip, "", flip}, convergeCase{"", f, orig, "", orig})
	}
	ra := keepAttr(t, d, "read_ahead_kb")
	raNum, _ := strconv.Atoi(ra)
	add(convergeCase{"", "read_ahead_kb", "130", "whole 4 KiB pages", ""},
		convergeCase{"", "read_ahead_kb", itoa(raNum + 4), "", itoa(raNum + 4)},
		convergeCase{"", "read_ahead_kb", ra, "", ra})

	keepAttr(t, d, "max_sectors_kb")
	hw := num("max_hw_sectors_kb")
	def := min(hw, 4096) // BLK_DEF_MAX_SECTORS_CAP; a loop device has no io_opt above it
	add(convergeCase{"", "max_sectors_kb", "2", "under 4 KiB", ""},
		convergeCase{"", "max_sectors_kb", "1280", "", "1280"},
		convergeCase{"", "max_sectors_kb", "0", "", itoa(def)})
	if hw < 1<<30 {
		add(convergeCase{"", "max_sectors_kb", itoa(hw + 1), "at most max_hw_sectors_kb", ""})
	}

	// Not restored: a loop device starts with no user cap, which reads as
	// UINT_MAX sectors, not a multiple of the granularity, and no write
	// can set it back; the device is detached at the end.
	if g := num("discard_granularity"); g == 0 {
		add(convergeCase{"", "discard_max_bytes", "4096", "no discard support", ""})
	} else {
		add(convergeCase{"", "discard_max_bytes", itoa(g + 1), "multiple of discard_granularity", ""},
			convergeCase{"", "discard_max_bytes", itoa(g), "", itoa(g)})
	}

	keepAttr(t, d, "nr_requests")
	depth := sysNum("mq/0/nr_tags")
	add(convergeCase{"none", "nr_requests", "100000", "above the queue depth", ""},
		convergeCase{"none", "nr_requests", "1", "raised to BLKDEV_MIN_RQ", ""},
		convergeCase{"none", "nr_requests", itoa(depth / 2), "", itoa(depth / 2)},
		convergeCase{"mq-deadline", "nr_requests", "2049", "MAX_SCHED_RQ", ""},
		convergeCase{"mq-deadline", "nr_requests", "64", "", "64"},
		convergeCase{"none", "nr_requests", itoa(depth), "", itoa(depth)})

	nm := keepAttr(t, d, "nomerges")
	add(convergeCase{"", "nomerges", "7", "would keep 1", ""},
		convergeCase{"", "nomerges", "2", "", "2"}, convergeCase{"", "nomerges", nm, "", nm})
	rq := keepAttr(t, d, "rq_affinity")
	add(convergeCase{"", "rq_affinity", "3", "ignores it", ""},
		convergeCase{"", "rq_affinity", "2", "", "2"}, convergeCase{"", "rq_affinity", rq, "", rq})
	to := keep("io_timeout")
	add(convergeCase{"", "io_timeout", "0", "0 is EINVAL", ""},
		convergeCase{"", "io_timeout", "4294967296", "kstrtou32", ""},
		convergeCase{"", "io_timeout", "20000", "", "20000"}, convergeCase{"", "io_timeout", to, "", to})

	defLat := map[string]string{"0": "2000", "1": "75000"}[q("rotational")]
	add(convergeCase{"", "wbt_lat_usec", "9223372036854775807", "overflows 64 bits", ""},
		convergeCase{"", "wbt_lat_usec", "-2", "below -1", ""},
		convergeCase{"", "wbt_lat_usec", "4000", "", "4000"},
		convergeCase{"", "wbt_lat_usec", "-1", "", defLat})

	wc := keepAttr(t, d, "write_cache")
	add(convergeCase{"", "write_cache", "write through", "", "write through"},
		convergeCase{"", "write_cache", "write back", "", "write back"},
		convergeCase{"", "write_cache", "writeback", "queue_wc_store", ""},
		convergeCase{"", "write_cache", wc, "", wc})

	dl := func(attr, value, refused, kept string) convergeCase {
		return convergeCase{"mq-deadline", queueattr.TunablePrefix + attr, value, refused, kept}
	}
	add(dl("front_merges", "7", "clamped to 0..1", ""), dl("fifo_batch", "-1", "clamped to 0..2147483647", ""),
		dl("read_expire", "4294967296", "kstrtoint", ""), dl("read_expire", "010", "octal", ""),
		dl("fifo_batch", "8", "", "8"), dl("front_merges", "0", "", "0"), dl("writes_starved", "-3", "", "-3"),
		dl("read_expire", "300", "", "300"), dl("write_expire", "3000", "", "3000"),
		dl("prio_aging_expire", "5000", "", "5000"))
	// Kept in jiffies: what reads back depends on the kernel's HZ, found
	// here as the helper finds it.
	hz := hostHZ(t)
	switch hz {
	case 250:
		add(dl("read_expire", "508", "", "508"), dl("read_expire", "501", "would keep 504", ""),
			dl("read_expire", "2147483647", "reads back negative", ""), dl("read_expire", "2147483644", "", "2147483644"))
	case 100:
		add(dl("read_expire", "510", "", "510"), dl("read_expire", "501", "would keep 510", ""),
			dl("read_expire", "2147483647", "reads back negative", ""))
	case 1000:
		add(dl("read_expire", "501", "", "501"), dl("read_expire", "2147483647", "", "2147483647"))
	}
	// async_depth is mq-deadline's on kernels before 7.3 only.
	hasAsyncDepth := false
	if slices.Contains(offeredBy(t, d), "mq-deadline") {
		force(t, d, "mq-deadline")
		_, err := os.Stat(filepath.Join("/sys/block", d.Name, "queue/iosched/async_depth"))
		hasAsyncDepth = err == nil
		force(t, d, "none")
	}
	if hasAsyncDepth {
		add(dl("async_depth", "0", "clamped to 1..", ""), dl("async_depth", "64", "", "64"))
	}
	bq := func(attr, value, refused, kept string) convergeCase {
		return convergeCase{"bfq", queueattr.TunablePrefix + attr, value, refused, kept}
	}
	add(bq("low_latency", "7", "clamped to 0..1", ""), bq("timeout_sync", "0", "clamped to 1, then kept in whole jiffies", ""),
		bq("back_seek_penalty", "0", "clamped to 1..", ""), bq("fifo_expire_sync", "-1", "kstrtoul", ""),
		bq("slice_idle", "4294967296", "wraps", ""), bq("slice_idle", "4295", "wraps", ""),
		bq("slice_idle_us", "4294968", "wraps", ""), bq("slice_idle", "4294", "", "4294"),
		bq("slice_idle_us", "4294967", "", "4294967"),
		bq("low_latency", "0", "", "0"), bq("slice_idle", "0", "", "0"), bq("slice_idle_us", "5000", "", "5000"),
		bq("max_budget", "0", "", "0"), bq("max_budget", "4096", "", "4096"), bq("timeout_sync", "200", "", "200"),
		bq("back_seek_max", "8192", "", "8192"), bq("back_seek_penalty", "4", "", "4"),
		bq("fifo_expire_sync", "250", "", "250"), bq("fifo_expire_async", "500", "", "500"),
		bq("strict_guarantees", "1", "", "1"))
	if hz == 250 {
		// Clamped to INT_MAX ms, which reads back rounded up to a jiffy:
		// the value asked, so it holds.
		add(bq("timeout_sync", "2147483648", "", "2147483648"), bq("timeout_sync", "2147483649", "would keep 2147483648", ""))
	}
	ky := func(attr, value, refused, kept string) convergeCase {
		return convergeCase{"kyber", queueattr.TunablePrefix + attr, value, refused, kept}
	}
	add(ky("read_lat_nsec", "-1", "kstrtoull", ""), ky("read_lat_nsec", "3000000", "", "3000000"),
		ky("write_lat_nsec", "20000000", "", "20000000"))

	covered, ran := map[string]bool{"iosched/async_depth": !hasAsyncDepth}, 0
	offered := offeredBy(t, d)
	for _, c := range cases {
		covered[c.attr] = true
		if c.sched != "" && !slices.Contains(offered, c.sched) {
			t.Logf("%s not offered here: skipping %s=%s", c.sched, c.attr, c.value)
			continue
		}
		if _, err := os.Stat(filepath.Join("/sys/block", d.Name, "queue", c.attr)); c.sched == "" && err != nil {
			t.Logf("no queue/%s on this kernel: skipping", c.attr)
			continue
		}
		if c.sched != "" {
			force(t, d, c.sched)
		}
		converge(t, b, d, c)
		ran++
	}
	t.Logf("%d of %d cases ran", ran, len(cases))
	var missing []string
	for _, n := range queueattr.Names() {
		if !covered[n] {
			missing = append(missing, n)
		}
	}
	for _, names := range queueattr.Tunables {
		for _, n := range names {
			if !covered[queueattr.TunablePrefix+n] {
				missing = append(missing, queueattr.TunablePrefix+n)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("no case for %q", missing)
	}
	force(t, d, "none")
}

// TestConvergeReadOnlyLoop: a read-only loop device has no volatile
// write cache, so "write back" is refused before any write.
func TestConvergeReadOnlyLoop(t *testing.T) {
	b := setup(t)
	d := newReadOnlyLoop(t)
	if got := queueAttr(t, d, "write_cache"); got != "write through" {
		t.Fatalf("a read-only loop device reads write_cache %q, want write through", got)
	}
	converge(t, b, d, convergeCase{"", "write_cache", "write back", "no volatile write cache", ""})
	converge(t, b, d, convergeCase{"", "write_cache", "write through", "", "write through"})
	// The same from udev, on every change event: refused, never written
	// (udev mode reports a bad property and exits 1).
	env := append(udevEnv("change", "disk", d.Devpath, ""), "IOSCHED_ATTR_write_cache=write back")
	for i := 0; i < 2; i++ {
		o := run(t, true, env, b.Cgo, "udev")
		if o.Code != 1 || !strings.Contains(o.Stderr, "no volatile write cache") {
			t.Errorf("udev change %d: exit %d, stderr %q; want exit 1 and the reason", i, o.Code, o.Stderr)
		}
		if w := o.writeOpens(); len(w) != 0 {
			t.Errorf("udev change %d: opened for writing %q", i, w)
		}
	}
}

// TestConvergeSetroLoop: a loop device attached writable and then made
// read-only with blockdev --setro reads ro 1 as one attached read-only
// does, but keeps its write cache: "write back" is written once and
// holds (the helper asks the device, LOOP_GET_STATUS64).
func TestConvergeSetroLoop(t *testing.T) {
	b := setup(t, "blockdev")
	d := newLoop(t, "")
	keepAttr(t, d, "write_cache")
	if out, err := exec.Command("blockdev", "--setro", d.Dev).CombinedOutput(); err != nil {
		t.Fatalf("blockdev --setro %s: %v\n%s", d.Dev, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("blockdev", "--setrw", d.Dev).CombinedOutput(); err != nil {
			t.Errorf("blockdev --setrw %s: %v\n%s", d.Dev, err, out)
		}
	})
	if ro, _ := readFile(filepath.Join("/sys/block", d.Name, "ro")); strings.TrimSpace(ro) != "1" {
		t.Fatalf("after blockdev --setro %s reads ro %q", d.Name, ro)
	}
	converge(t, b, d, convergeCase{"", "write_cache", "write through", "", "write through"})
	converge(t, b, d, convergeCase{"", "write_cache", "write back", "", "write back"})
}

// converge runs one case, traced, and for a converging one a second time.
func converge(t *testing.T, b bins, d *loopDev, c convergeCase) {
	t.Helper()
	argv := []string{b.Static, "set", d.Name}
	if c.sched != "" {
		argv = append(argv, c.sched)
	}
	argv = append(argv, c.attr+"="+c.value)
	o := run(t, true, nil, argv...)
	name := c.attr + "=" + c.value
	if c.refused != "" {
		if o.Code != 2 || !strings.Contains(o.Stderr, c.attr+`="`+c.value+`"`) || !strings.Contains(o.Stderr, c.refused) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 naming %s=%q and %q", name, o.Code, o.Stderr, c.attr, c.value, c.refused)
		}
		if w := o.writeOpens(); len(w) != 0 {
			t.Errorf("%s: refused, but opened for writing %q", name, w)
		}
		return
	}
	if o.Code != 0 {
		t.Errorf("%s: exit %d, stderr %q", name, o.Code, o.Stderr)
	}
	if w := o.writeOpens(); len(w) > 1 || len(w) == 1 && w[0] != realAttr(d, c.attr) {
		t.Errorf("%s: opened for writing %q, want at most %s once", name, w, realAttr(d, c.attr))
	}
	if got := queueAttr(t, d, c.attr); got != c.kept {
		t.Errorf("%s: queue/%s reads %q afterwards, want %q", name, c.attr, got, c.kept)
	}
	again := run(t, true, nil, argv...)
	var want got
	if c.sched != "" {
		want.Stdout = d.Name + ": " + c.sched + " already active\n"
	}
	want.Stdout += d.Name + ": " + c.attr + " " + c.kept + " already set\n"
	if diff := cmp.Diff(want, again.got()); diff != "" {
		t.Errorf("%s, second run (-want +got):\n%s\nstderr: %s", name, diff, again.Stderr)
	}
	if w := again.writeOpens(); len(w) != 0 {
		t.Errorf("%s, second run: opened for writing %q", name, w)
	}
}

// newReadOnlyLoop attaches a file in t.TempDir() read-only (losetup -r);
// cleanup detaches it as newLoop's does.
func newReadOnlyLoop(t *testing.T) *loopDev {
	t.Helper()
	img := filepath.Join(t.TempDir(), "ro.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 16<<20); err != nil {
		t.Fatal(err)
	}
	return attachLoop(t, img, "-r", "-f", "--show")
}
