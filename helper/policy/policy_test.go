package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/iosched/iosched/helper/disklock"
	"github.com/iosched/iosched/helper/internal/fixture"
	"github.com/iosched/iosched/helper/jiffies"
	"github.com/iosched/iosched/helper/pin"
	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/sched"
	"github.com/iosched/iosched/helper/sysfs"
)

// kernel models a loop device's queue on a 6.18 kernel with HZ=250, as
// measured on 6.18.44 and read in the 7.3.4 sources, with the links
// between attributes that make a naive writer write on every run. It is
// written apart from queueattr's model, so that the two can disagree.
type kernel struct {
	active  string
	offered []string
	vals    map[string]string // queue/ attributes; iosched/ tunables of the active scheduler
	disk    map[string]string // attributes of the disk, "ro", "mq/0/nr_tags"
	sliceNs uint64            // bfq's bfq_slice_idle
	writes  []string          // ATTR=VALUE of every write(2)
}

func newKernel() *kernel {
	k := &kernel{active: "none", offered: []string{"none", "mq-deadline", "kyber", "bfq"},
		vals: map[string]string{"rotational": "1", "read_ahead_kb": "128", "max_sectors_kb": "1280",
			"max_hw_sectors_kb": "1280", "logical_block_size": "512", "nr_requests": "128", "nomerges": "0",
			"add_random": "0", "write_cache": "write back", "wbt_lat_usec": "75000"},
		disk: map[string]string{"ro": "0", "mq/0/nr_tags": "128", "mq/0/nr_reserved_tags": "0"}}
	return k
}

func (k *kernel) Name() string            { return "loop9" }
func (k *kernel) Path(attr string) string { return "/sys/block/loop9/queue/" + attr }

func (k *kernel) Read(attr string) (string, error) {
	switch attr {
	case "scheduler":
		var b strings.Builder
		for _, o := range k.offered {
			if o == k.active {
				o = "[" + o + "]"
			}
			b.WriteString(o + " ")
		}
		return strings.TrimSpace(b.String()), nil
	case "iosched/slice_idle":
		if k.active == "bfq" {
			return strconv.FormatUint(k.sliceNs/1e6, 10), nil
		}
	case "iosched/slice_idle_us":
		if k.active == "bfq" {
			return strconv.FormatUint(k.sliceNs/1e3, 10), nil
		}
	}
	v, ok := k.vals[attr]
	if !ok {
		return "", syscall.ENOENT
	}
	return v, nil
}

func (k *kernel) ReadDisk(attr string) (string, error) {
	v, ok := k.disk[attr]
	if !ok {
		return "", syscall.ENOENT
	}
	return v, nil
}

var limits = map[string]bool{"rotational": true, "max_sectors_kb": true, "add_random": true, "write_cache": true}

func (k *kernel) Write(attr, v string) error {
	k.writes = append(k.writes, attr+"="+v)
	n, nerr := strconv.ParseInt(v, 10, 64)
	switch {
	case attr == "scheduler":
		k.switchTo(sched.Effective(v))
		return nil
	case limits[attr]:
		if attr == "max_sectors_kb" && n > 1280 {
			n = 1280
		}
		if nerr == nil {
			v = strconv.FormatInt(n, 10)
		}
		k.vals[attr] = v
		// blk_apply_bdi_limits(): a limits commit raises read-ahead
		// to at least VM_READAHEAD_PAGES (128 KiB).
		if ra, _ := strconv.Atoi(k.vals["read_ahead_kb"]); ra < 128 {
			k.vals["read_ahead_kb"] = "128"
		}
		return nil
	case attr == "nr_requests":
		if k.active == "none" && n > 128 || n > 2048 {
			return syscall.EINVAL
		}
		k.vals[attr] = v
		if k.active == "mq-deadline" {
			k.vals["iosched/async_depth"] = v // dd_depth_updated()
		}
		return nil
	case attr == "iosched/read_expire" || attr == "iosched/write_expire":
		j := (n + 3) / 4                        // msecs_to_jiffies, HZ=250
		k.vals[attr] = fmt.Sprint(int32(4 * j)) // jiffies_to_msecs shown as an int
		return nil
	case attr == "iosched/timeout_sync":
		j := (min(max(n, 1), 1<<31-1) + 3) / 4 // clamped, msecs_to_jiffies, HZ=250
		k.vals[attr] = fmt.Sprint(uint32(4 * j))
		return nil
	case attr == "iosched/slice_idle":
		k.sliceNs = uint64(uint32(uint64(min(n, 1<<31-1)) * 1e6)) // a u32 of ns
		return nil
	case attr == "iosched/slice_idle_us":
		k.sliceNs = uint64(uint32(uint64(min(n, 1<<32-1)) * 1e3))
		return nil
	case attr == "iosched/strict_guarantees":
		if k.vals[attr] == "0" && n == 1 && k.sliceNs < 8e6 {
			k.sliceNs = 8e6
		}
	}
	if _, ok := k.vals[attr]; !ok {
		return syscall.ENOENT
	}
	k.vals[attr] = v
	return nil
}

// switchTo is elevator_switch(): new tunables, nr_requests reset.
func (k *kernel) switchTo(name string) {
	if name == k.active {
		return
	}
	for a := range k.vals {
		if strings.HasPrefix(a, "iosched/") {
			delete(k.vals, a)
		}
	}
	k.active = name
	k.vals["nr_requests"] = "128"
	switch name {
	case "none":
		return
	case "mq-deadline":
		k.vals["nr_requests"] = "256"
		for a, v := range map[string]string{"read_expire": "500", "write_expire": "5000", "fifo_batch": "16",
			"front_merges": "1", "writes_starved": "2", "prio_aging_expire": "10000", "async_depth": "256"} {
			k.vals["iosched/"+a] = v
		}
	case "bfq":
		k.vals["nr_requests"] = "256"
		k.sliceNs = 8e6
		for a, v := range map[string]string{"strict_guarantees": "0", "low_latency": "1", "max_budget": "0", "timeout_sync": "124"} {
			k.vals["iosched/"+a] = v
		}
	case "kyber":
		k.vals["nr_requests"] = "256"
		k.vals["iosched/read_lat_nsec"] = "2000000"
		k.vals["iosched/write_lat_nsec"] = "10000000"
	}
}

func testDisk(t *testing.T, k *kernel) Disk {
	return Disk{Queue: k, Locks: disklock.Dir{Path: filepath.Join(t.TempDir(), "locks"), Owner: os.Geteuid()},
		HZ: func() (jiffies.HZ, string, error) { return 250, "the model", nil }}
}

// set is `iosched set` on the model: parse, check, apply. It returns the
// first refusal, or the report's error.
func set(t *testing.T, k *kernel, args ...string) error {
	p, err := Parse(args)
	if err != nil {
		return err
	}
	d := testDisk(t, k)
	plan := d.Check(p)
	if len(plan.Refused) > 0 {
		return errors.Join(plan.Refused...)
	}
	return d.Apply(plan).Err()
}

// TestRefusedBeforeAnyWrite: the hostile inputs of the helper's review,
// and their classes, are refused with nothing written.
func TestRefusedBeforeAnyWrite(t *testing.T) {
	tests := []struct {
		name   string
		setup  string // scheduler active first
		args   []string
		reason string // in the error
	}{
		{"nr_requests above the depth after a freezing write", "none", []string{"rotational=0", "nr_requests=129"}, "above the queue depth 128"},
		{"max_sectors_kb above max_hw after a switch", "none", []string{"mq-deadline", "max_sectors_kb=2048"}, "at most max_hw_sectors_kb 1280"},
		{"nr_requests above MAX_SCHED_RQ after a switch", "none", []string{"bfq", "nr_requests=4096"}, "MAX_SCHED_RQ"},
		{"jiffies tunable that wraps", "mq-deadline", []string{"iosched/read_expire=2147483647"}, "reads back negative"},
		{"jiffies tunable that wraps, with a switch", "none", []string{"mq-deadline", "iosched/write_expire=2147483647"}, "reads back negative"},
		{"jiffies tunable rounded up to a jiffy", "mq-deadline", []string{"iosched/read_expire=501"}, "would keep 504"},
		{"bfq idle in us that wraps, with a switch", "none", []string{"bfq", "iosched/slice_idle_us=4294968"}, "wraps"},
		{"bfq idle in ms that wraps", "bfq", []string{"iosched/slice_idle=4295"}, "wraps"},
		{"bfq timeout above INT_MAX that HZ=250 does not show as written", "bfq", []string{"iosched/timeout_sync=2147483649"}, "would keep 2147483648"},
		{"int overflow", "mq-deadline", []string{"iosched/fifo_batch=2147483648"}, "kstrtoint"},
		{"the same attribute twice", "none", []string{"read_ahead_kb=128", "read_ahead_kb=256"}, "read_ahead_kb given twice"},
		{"the same tunable twice", "mq-deadline", []string{"iosched/fifo_batch=8", "iosched/fifo_batch=8"}, "given twice"},
		{"one value in two units", "bfq", []string{"iosched/slice_idle=0", "iosched/slice_idle_us=0"}, "two units"},
		{"one value in two units, with a switch", "none", []string{"bfq", "iosched/slice_idle_us=2000", "iosched/slice_idle=2"}, "two units"},
		{"tunable of another scheduler", "mq-deadline", []string{"iosched/slice_idle=0"}, "not a tunable of mq-deadline"},
		{"tunable after a switch to none", "mq-deadline", []string{"none", "iosched/read_expire=100"}, "none has no tunables"},
		{"clamped flag after a good one", "none", []string{"read_ahead_kb=256", "nomerges=7"}, "would keep 1"},
		{"missing attribute after a good one", "none", []string{"read_ahead_kb=256", "rq_affinity=1"}, "no such attribute"},
		{"keep alone", "none", []string{"keep"}, "ends a list"},
		{"keep inside a list", "none", []string{"keep,bfq"}, "ends a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKernel()
			k.switchTo(tt.setup)
			err := set(t, k, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("set %q: error %v, want one saying %q", tt.args, err, tt.reason)
			}
			if len(k.writes) != 0 {
				t.Errorf("set %q: refused, but wrote %q", tt.args, k.writes)
			}
		})
	}
}

// TestSecondRunWritesNothing: every accepted set, linked pairs
// included, converges in one run: the second writes nothing, and the
// queue reads what was asked.
func TestSecondRunWritesNothing(t *testing.T) {
	tests := []struct {
		name  string
		setup string
		args  []string
		want  map[string]string // what the queue reads afterwards
	}{
		{"read-ahead lowered beside a limit", "none", []string{"read_ahead_kb=64", "rotational=0"},
			map[string]string{"read_ahead_kb": "64", "rotational": "0"}},
		{"read-ahead lowered beside max_sectors_kb", "none", []string{"read_ahead_kb=32", "max_sectors_kb=512", "add_random=1"},
			map[string]string{"read_ahead_kb": "32", "max_sectors_kb": "512", "add_random": "1"}},
		{"strict guarantees with no idling", "none", []string{"bfq", "iosched/slice_idle=0", "iosched/strict_guarantees=1"},
			map[string]string{"iosched/slice_idle": "0", "iosched/strict_guarantees": "1"}},
		{"strict guarantees with no idling, in us", "bfq", []string{"iosched/slice_idle_us=0", "iosched/strict_guarantees=1"},
			map[string]string{"iosched/slice_idle_us": "0", "iosched/strict_guarantees": "1"}},
		{"async_depth beside nr_requests", "none", []string{"mq-deadline", "iosched/async_depth=32", "nr_requests=64"},
			map[string]string{"iosched/async_depth": "32", "nr_requests": "64"}},
		{"the longest jiffies tunable that reads back", "mq-deadline", []string{"iosched/read_expire=2147483640"},
			map[string]string{"iosched/read_expire": "2147483640"}},
		{"a jiffies tunable exact on HZ=250", "mq-deadline", []string{"iosched/write_expire=508"},
			map[string]string{"iosched/write_expire": "508"}},
		{"bfq's timeout above INT_MAX that HZ=250 shows as written", "none", []string{"bfq", "iosched/timeout_sync=2147483648"},
			map[string]string{"iosched/timeout_sync": "2147483648"}},
		{"bfq's longest idle in us", "bfq", []string{"iosched/slice_idle_us=4294967"},
			map[string]string{"iosched/slice_idle_us": "4294967", "iosched/slice_idle": "4294"}},
		{"nr_requests after a switch", "none", []string{"kyber", "nr_requests=64", "iosched/read_lat_nsec=3000000"},
			map[string]string{"nr_requests": "64", "iosched/read_lat_nsec": "3000000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKernel()
			k.switchTo(tt.setup)
			if err := set(t, k, tt.args...); err != nil {
				t.Fatalf("set %q: %v", tt.args, err)
			}
			if len(k.writes) == 0 {
				t.Fatalf("set %q: the first run wrote nothing: the case tests nothing", tt.args)
			}
			k.writes = nil
			if err := set(t, k, tt.args...); err != nil {
				t.Fatalf("set %q, second run: %v", tt.args, err)
			}
			if len(k.writes) != 0 {
				t.Errorf("set %q, second run: wrote %q", tt.args, k.writes)
			}
			got := map[string]string{}
			for a := range tt.want {
				got[a], _ = k.Read(a)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("set %q: queue afterwards (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

// TestKeep: a list that ends in keep leaves the scheduler as it is when
// no earlier name can be used: no write, no error.
func TestKeep(t *testing.T) {
	k := newKernel()
	k.offered = []string{"none", "mq-deadline"}
	d := testDisk(t, k)
	p, err := Parse([]string{"bfq,kyber,keep", "read_ahead_kb=256"})
	if err != nil {
		t.Fatal(err)
	}
	plan := d.Check(p)
	if len(plan.Refused) > 0 {
		t.Fatal(plan.Refused)
	}
	r := d.Apply(plan)
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	want := "loop9: none kept (unavailable: bfq,kyber)\nloop9: read_ahead_kb 128 -> 256\n"
	if diff := cmp.Diff(want, r.Text(false)); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"read_ahead_kb=256"}, k.writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	// Without keep the same list fails.
	p, _ = Parse([]string{"bfq,kyber"})
	if err := d.Apply(d.Check(p)).Err(); err == nil {
		t.Error("bfq,kyber on a disk offering neither: no error")
	}
}

// TestTunablesFromKernel: the names under the disk's queue/iosched/
// decide, not the table: a tunable the table lacks is accepted, and a
// table name the kernel lacks is refused.
func TestTunablesFromKernel(t *testing.T) {
	disks := fixture.Standard()
	disks[0].Queue = map[string]string{"iosched/read_expire": "500\n", "iosched/some_new_knob": "3\n"}
	sys := fixture.New(t, disks...)
	// nvme0n1 runs none; loop0 switches to kyber below, which no disk
	// runs: the table answers.
	d := Disk{Queue: sysfs.Queue{FS: sys, Disk: "sda"}, Sys: sys}
	tests := []struct {
		disk string
		args []string
		want string // "" accepted, else in the refusal
	}{
		{"sda", []string{"iosched/some_new_knob=4"}, ""},
		{"sda", []string{"iosched/fifo_batch=8"}, "fifo_batch is not a tunable of mq-deadline (it has read_expire some_new_knob)"},
		{"nvme0n1", []string{"mq-deadline", "iosched/some_new_knob=4"}, ""}, // sda shows mq-deadline's
		{"nvme0n1", []string{"kyber", "iosched/fifo_batch=8"}, "fifo_batch is not a tunable of kyber (it has read_lat_nsec write_lat_nsec)"},
	}
	for _, tt := range tests {
		d.Queue = sysfs.Queue{FS: sys, Disk: tt.disk}
		p, err := Parse(tt.args)
		if err != nil {
			t.Fatal(err)
		}
		bad := d.Check(p).Refused
		got := ""
		if len(bad) > 0 {
			got = errors.Join(bad...).Error()
		}
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s %q: refusal %q, want %q", tt.disk, tt.args, got, tt.want)
		}
	}
}

// TestOrder: writes that undo each other come in the order that keeps
// both; the rest keeps the order given.
func TestOrder(t *testing.T) {
	p, err := Parse([]string{"iosched/slice_idle=0", "read_ahead_kb=64", "iosched/strict_guarantees=1", "nomerges=2", "rotational=0", "wbt_lat_usec=0"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range p.Settings {
		got = append(got, s.Spec.Name)
	}
	want := []string{"rotational", "wbt_lat_usec", "read_ahead_kb", "nomerges", "iosched/strict_guarantees", "iosched/slice_idle"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	_ = queueattr.Scheduler
}

// TestWantedFor: the kernel command line as 60-iosched.rules records
// it (the class's list, the two parameters, the list it composed), the
// list a disk gets and where from; a malformed parameter is one error
// naming it as written, and the class policy stands.
func TestWantedFor(t *testing.T) {
	const class, elev, cmd, list = "IOSCHED_CLASS_SCHEDULER", "IOSCHED_CMDLINE_ELEVATOR", "IOSCHED_CMDLINE_SCHEDULER", "IOSCHED_SCHEDULER"
	// rules composes the properties as 60-iosched.rules does.
	rules := func(c, e, s string) map[string]string {
		m := map[string]string{class: c, list: c, elev: e, cmd: s}
		if e != "" {
			m[list] = joinList(e, c)
		}
		if s != "" && !strings.Contains(s, ":") {
			m[list] = s
		}
		if strings.Contains(s, ":") {
			m["IOSCHED_CMDLINE"] = s
		}
		return m
	}
	withID := func(m map[string]string, k, v string) map[string]string { m[k] = v; return m }
	type res struct {
		Wanted Wanted
		Errs   []string
	}
	tests := []struct {
		name  string
		disk  string
		props map[string]string
		want  res
	}{
		{"class alone", "sda", rules("bfq,mq-deadline", "", ""), res{Wanted{"bfq,mq-deadline", SourceClass, ""}, nil}},
		{"nothing", "sda", map[string]string{}, res{Wanted{}, nil}},
		{"another rule", "sda", map[string]string{class: "bfq", list: "kyber"}, res{Wanted{"kyber", SourceRule, ""}, nil}},
		{"per disk", "sda", rules("bfq", "", "sda:kyber"), res{Wanted{"kyber", SourceCmdline, "iosched.scheduler=sda:kyber"}, nil}},
		{"per disk, another disk", "sdb", rules("bfq", "", "sda:kyber"), res{Wanted{"bfq", SourceClass, ""}, nil}},
		{"per disk, the rest", "sdb", rules("bfq", "", "sda:kyber/none"), res{Wanted{"none", SourceCmdline, "iosched.scheduler=sda:kyber/none"}, nil}},
		{"per disk with keep", "sda", rules("bfq", "", "none/sda:kyber,keep"), res{Wanted{"kyber,keep", SourceCmdline, "iosched.scheduler=none/sda:kyber,keep"}, nil}},
		{"every disk", "sda", rules("bfq", "", "mq-deadline,keep"), res{Wanted{"mq-deadline,keep", SourceCmdline, "iosched.scheduler=mq-deadline,keep"}, nil}},
		{"elevator", "sda", rules("bfq,mq-deadline", "none", ""), res{Wanted{"none,bfq,mq-deadline", SourceCmdline, "elevator=none"}, nil}},
		{"elevator, no class", "sda", rules("", "kyber", ""), res{Wanted{"kyber", SourceCmdline, "elevator=kyber"}, nil}},
		{"per disk by WWN", "sdc", withID(rules("bfq", "", "0x5000c500a1b2c3d4:kyber/sdc:none"), "ID_WWN", "0x5000c500a1b2c3d4"),
			res{Wanted{"kyber", SourceCmdline, "iosched.scheduler=0x5000c500a1b2c3d4:kyber/sdc:none"}, nil}},
		{"per disk by serial", "sdc", withID(rules("bfq", "", "ST1000_Z1:kyber"), "ID_SERIAL", "ST1000_Z1"),
			res{Wanted{"kyber", SourceCmdline, "iosched.scheduler=ST1000_Z1:kyber"}, nil}},
		{"elevator, then a disk's entry", "sda", rules("bfq", "none", "sda:kyber"), res{Wanted{"kyber", SourceCmdline, "iosched.scheduler=sda:kyber"}, nil}},
		// A rule sorting after 60-iosched.rules replaced the list: elevator=
		// is not put back in front of it, entries for other disks or not.
		{"a later rule, elevator and entries", "sda", withID(rules("bfq", "none", "sdz:kyber"), list, "mq-deadline"), res{Wanted{"mq-deadline", SourceRule, ""}, nil}},
		{"a multipath path", "sdb", map[string]string{list: "none", elev: "kyber", cmd: "vdb:mq-deadline"}, res{Wanted{"none", SourceRule, ""}, nil}},
		// Malformed: one error each, naming the parameter; the class stands.
		{"a name the kernel never has", "sda", rules("bfq", "", "sda:Bfq"), res{Wanted{"bfq", SourceClass, ""},
			[]string{`sda: kernel command line "iosched.scheduler=sda:Bfq": scheduler list "Bfq": bad scheduler name "Bfq": byte 'B' not in [a-z0-9_-]; the class policy stands (bfq)`}}},
		{"two lists in an entry", "sda", rules("bfq", "", "sda:bfq:none"), res{Wanted{"bfq", SourceClass, ""},
			[]string{`sda: kernel command line "iosched.scheduler=sda:bfq:none": entry "sda:bfq:none": want DISK:LIST or LIST, entries joined by /; the class policy stands (bfq)`}}},
		{"every disk, malformed", "sda", rules("mq-deadline", "", "Bfq"), res{Wanted{"mq-deadline", SourceClass, ""},
			[]string{`sda: kernel command line "iosched.scheduler=Bfq": scheduler list "Bfq": bad scheduler name "Bfq": byte 'B' not in [a-z0-9_-]; the class policy stands (mq-deadline)`}}},
		{"elevator in capitals", "sda", rules("mq-deadline", "NOOP", ""), res{Wanted{"mq-deadline", SourceClass, ""},
			[]string{`sda: kernel command line "elevator=NOOP": scheduler list "NOOP": bad scheduler name "NOOP": byte 'N' not in [a-z0-9_-]; the class policy stands (mq-deadline)`}}},
		{"elevator with a list", "sda", rules("mq-deadline", "bfq,none", ""), res{Wanted{"mq-deadline", SourceClass, ""},
			[]string{`sda: kernel command line "elevator=bfq,none": want one scheduler name; the class policy stands (mq-deadline)`}}},
		{"empty entry", "sda", rules("bfq", "", "sda:kyber//"), res{Wanted{"bfq", SourceClass, ""},
			[]string{`sda: kernel command line "iosched.scheduler=sda:kyber//": entry "": want DISK:LIST or LIST, entries joined by /; the class policy stands (bfq)`}}},
		{"no disk", "sda", rules("bfq", "", ":kyber"), res{Wanted{"bfq", SourceClass, ""},
			[]string{`sda: kernel command line "iosched.scheduler=:kyber": entry ":kyber": want DISK:LIST or LIST, entries joined by /; the class policy stands (bfq)`}}},
		{"good elevator, bad entry", "sda", rules("bfq", "none", "sda:"), res{Wanted{"none,bfq", SourceCmdline, "elevator=none"},
			[]string{`sda: kernel command line "iosched.scheduler=sda:": entry "sda:": want DISK:LIST or LIST, entries joined by /; elevator=none stands (none,bfq)`}}},
	}
	for _, tt := range tests {
		w, errs := WantedFor(tt.disk, func(k string) string { return tt.props[k] })
		got := res{Wanted: w}
		for _, err := range errs {
			got.Errs = append(got.Errs, err.Error())
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: WantedFor (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestRulesComposeAsWantedForUndoes holds 60-iosched.rules and
// wantedList in step: the lines that compose IOSCHED_SCHEDULER from the
// class and the kernel command line are the ones TestWantedFor's rules
// mirrors and wantedList undoes.
func TestRulesComposeAsWantedForUndoes(t *testing.T) {
	b, err := os.ReadFile("../../rules.d/60-iosched.rules")
	if err != nil {
		t.Fatal(err)
	}
	rules := string(b)
	for _, line := range []string{
		`ENV{IOSCHED_CMDLINE_ELEVATOR}="$env{elevator}", ENV{IOSCHED_CMDLINE_SCHEDULER}="$env{iosched.scheduler}"`,
		`ENV{IOSCHED_CLASS_SCHEDULER}=="?*", ENV{IOSCHED_SCHEDULER}="$env{IOSCHED_CLASS_SCHEDULER}"`,
		`ENV{IOSCHED_CMDLINE_ELEVATOR}=="?*", ENV{IOSCHED_SCHEDULER}=="?*", ENV{IOSCHED_SCHEDULER}="$env{IOSCHED_CMDLINE_ELEVATOR},$env{IOSCHED_SCHEDULER}"`,
		`ENV{IOSCHED_CMDLINE_ELEVATOR}=="?*", ENV{IOSCHED_SCHEDULER}!="?*", ENV{IOSCHED_SCHEDULER}="$env{IOSCHED_CMDLINE_ELEVATOR}"`,
		`ENV{IOSCHED_CMDLINE_SCHEDULER}=="?*", ENV{IOSCHED_CMDLINE_SCHEDULER}!="*:*", ENV{IOSCHED_SCHEDULER}="$env{IOSCHED_CMDLINE_SCHEDULER}"`,
		`ENV{IOSCHED_CMDLINE_SCHEDULER}=="*:*", ENV{IOSCHED_CMDLINE}="$env{IOSCHED_CMDLINE_SCHEDULER}"`,
		`ENV{DM_MULTIPATH_DEVICE_PATH}=="1", ENV{IOSCHED_CMDLINE_ELEVATOR}="", ENV{IOSCHED_CMDLINE_SCHEDULER}="", GOTO="iosched_end"`,
	} {
		if !strings.Contains(rules, line+"\n") {
			t.Errorf("60-iosched.rules has no line %s", line)
		}
	}
	for old, to := range LegacyNames {
		if line := fmt.Sprintf(`ENV{elevator}=="%s", ENV{elevator}="%s"`, old, to); !strings.Contains(rules, line+"\n") {
			t.Errorf("60-iosched.rules has no line %s", line)
		}
	}
	for _, p := range []string{queueattr.ClassProperty, queueattr.CmdlineElevatorProperty, queueattr.CmdlineSchedulerProperty, queueattr.CmdlineProperty} {
		if !strings.Contains(rules, "ENV{"+p+"}") {
			t.Errorf("60-iosched.rules never names %s", p)
		}
	}
}

// counting is the kernel model with every read counted.
type counting struct {
	*kernel
	reads []string
}

func (c *counting) Read(attr string) (string, error) {
	c.reads = append(c.reads, attr)
	return c.kernel.Read(attr)
}

func (c *counting) Write(attr, v string) error {
	c.reads = append(c.reads, "write "+attr)
	return c.kernel.Write(attr, v)
}

// TestReadsOnce: Check reads each file once, Apply of a plan with no
// change reads nothing more, and a change is read again, written and
// read back once (test/integration's TestOpensCounted counts the same
// on a loop device under strace).
func TestReadsOnce(t *testing.T) {
	tests := []struct {
		setup string
		args  []string
		want  []string
	}{
		{"mq-deadline", []string{"mq-deadline"}, []string{"scheduler"}},
		{"mq-deadline", []string{"mq-deadline", "read_ahead_kb=128"}, []string{"scheduler", "read_ahead_kb"}},
		{"none", []string{"mq-deadline"}, []string{"scheduler", "scheduler", "write scheduler", "scheduler"}},
		{"mq-deadline", []string{"mq-deadline", "read_ahead_kb=256"},
			[]string{"scheduler", "read_ahead_kb", "read_ahead_kb", "write read_ahead_kb", "read_ahead_kb"}},
	}
	for _, tt := range tests {
		k := newKernel()
		k.switchTo(tt.setup)
		c := &counting{kernel: k}
		d := testDisk(t, k)
		d.Queue = c
		p, err := Parse(tt.args)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Apply(d.Check(p)).Err(); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, c.reads); diff != "" {
			t.Errorf("set %q on %s: reads and writes (-want +got):\n%s", tt.args, tt.setup, diff)
		}
	}
}

func TestClipQuoted(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct{ in, want string }{
		{`short "abc" stays`, `short "abc" stays`},
		{`"` + strings.Repeat("y", 64) + `"`, `"` + strings.Repeat("y", 64) + `"`},
		{`bad value "` + long + `": want`, `bad value "` + strings.Repeat("x", 64) + `..." (100 bytes): want`},
		{`two "` + long + `" and "` + long + `"`, `two "` + strings.Repeat("x", 64) + `..." (100 bytes) and "` + strings.Repeat("x", 64) + `..." (100 bytes)`},
		// Escapes count as the bytes they stand for and are never split.
		{`"` + strings.Repeat(`\n`, 70) + `"`, `"` + strings.Repeat(`\n`, 64) + `..." (70 bytes)`},
		{`no quotes at all`, `no quotes at all`},
		{`unclosed "` + long, `unclosed "` + long},
		{`an escaped quote inside: "` + long + `\"x" stays inside`, `an escaped quote inside: "` + strings.Repeat("x", 64) + `..." (102 bytes) stays inside`},
		{`""`, `""`},
	}
	for _, tt := range tests {
		if got := ClipQuoted(tt.in); got != tt.want {
			t.Errorf("ClipQuoted(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestPolicyPin: a command line's policy as the pin's properties, in the
// order the rules record them, and as the command line gave it.
func TestPolicyPin(t *testing.T) {
	p, err := Parse([]string{"bfq,keep", "iosched/slice_idle=0", "read_ahead_kb=256"})
	if err != nil {
		t.Fatal(err)
	}
	want := pin.Pin{Key: "ID_WWN", Value: "0x5000", Props: [][2]string{
		{"IOSCHED_SCHEDULER", "bfq,keep"}, {"IOSCHED_ATTR_read_ahead_kb", "256"}, {"IOSCHED_TUNE_slice_idle", "0"}}}
	if diff := cmp.Diff(want, p.Pin("ID_WWN", "0x5000")); diff != "" {
		t.Errorf("Pin (-want +got):\n%s", diff)
	}
	if got, want := p.String(), "bfq,keep read_ahead_kb=256 iosched/slice_idle=0"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	p, err = Parse([]string{"nr_requests=64"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][2]string{{"IOSCHED_ATTR_nr_requests", "64"}}, p.Pin("ID_PATH", "x").Props); diff != "" {
		t.Errorf("Pin without a list (-want +got):\n%s", diff)
	}
	if got := p.String(); got != "nr_requests=64" {
		t.Errorf("String() = %q, want %q", got, "nr_requests=64")
	}
}

// TestApplyRecorded: recorded properties keep going past bad ones: the
// good settings are written, each bad or refused one is an error, and
// a dry run writes nothing.
func TestApplyRecorded(t *testing.T) {
	props := map[string]string{
		"IOSCHED_SCHEDULER":          "mq-deadline",
		"IOSCHED_ATTR_read_ahead_kb": "256",
		"IOSCHED_ATTR_nr_requests":   "lots", // bad value
		"IOSCHED_TUNE_slice_idle":    "0",    // not a tunable of mq-deadline
		"IOSCHED_TUNE_read_expire":   "240",
	}
	keys, get := KeysOf(props), func(k string) string { return props[k] }
	for _, dry := range []bool{true, false} {
		k := newKernel()
		r, bad := testDisk(t, k).ApplyRecorded(keys, get, dry)
		var errs []string
		for _, err := range bad {
			errs = append(errs, err.Error())
		}
		if len(errs) != 2 || !strings.Contains(errs[0], "IOSCHED_ATTR_nr_requests") || !strings.HasSuffix(errs[1], "; skipped") {
			t.Errorf("dry run %v: errors %q, want nr_requests's and slice_idle's, skipped", dry, errs)
		}
		var changed []string
		for _, c := range r.Changes {
			changed = append(changed, c.Attr+"="+c.To)
		}
		if diff := cmp.Diff([]string{"scheduler=mq-deadline", "read_ahead_kb=256", "iosched/read_expire=240"}, changed); diff != "" {
			t.Errorf("dry run %v: changes (-want +got):\n%s", dry, diff)
		}
		if wrote := len(k.writes) > 0; wrote == dry {
			t.Errorf("dry run %v: writes %q", dry, k.writes)
		}
	}
}
