package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/iosched/iosched/helper/disklock"
	"github.com/iosched/iosched/helper/internal/fixture"
	"github.com/iosched/iosched/helper/jiffies"
	"github.com/iosched/iosched/helper/kmod"
	"github.com/iosched/iosched/helper/status"
	"github.com/iosched/iosched/helper/sysfs"
)

type result struct {
	Code   int
	Stdout string
	Stderr string // first line only: the usage text follows usage errors
}

// changedFiles lists the files whose contents differ between snapshots.
func changedFiles(before, after map[string]string) []string {
	var c []string
	for p, v := range after {
		if before[p] != v {
			c = append(c, p)
		}
	}
	return c
}

// TestChangeWritesOnlyScheduler runs real changes against the fixture: a
// fixture file cannot act like the kernel (the read-back fails), but the
// one file written must be the disk's queue/scheduler and nothing else.
func TestChangeWritesOnlyScheduler(t *testing.T) {
	tests := []struct {
		args []string
		env  map[string]string
		file string
	}{
		{args: []string{"set", "sda", "bfq,mq-deadline"}, file: "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/queue/scheduler"},
		{args: []string{"set", "/dev/sda1", "kyber"}, file: "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/queue/scheduler"},
		{args: []string{"set", "loop0", "nosuch,kyber"}, file: "devices/virtual/block/loop0/queue/scheduler"},
		{args: []string{"set", "sda", "wbt_lat_usec=0"}, file: "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/queue/wbt_lat_usec"},
		{args: []string{"udev"}, env: map[string]string{"ACTION": "add", "DEVTYPE": "disk", "DEVPATH": "/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda",
			"IOSCHED_SCHEDULER": "mq-deadline", "IOSCHED_TUNE_read_expire": "240"},
			file: "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/queue/iosched/read_expire"},
		{args: []string{"udev"}, env: map[string]string{"ACTION": "add", "DEVTYPE": "disk", "DEVPATH": "/devices/virtual/block/loop0", "IOSCHED_SCHEDULER": "mq-deadline"},
			file: "devices/virtual/block/loop0/queue/scheduler"},
	}
	for _, tt := range tests {
		sys := fixture.New(t, fixture.Standard()...)
		before := snapshot(t, sys)
		runIn(t, sys, tt.env, nil, tt.args...)
		got := changedFiles(before, snapshot(t, sys))
		if diff := cmp.Diff([]string{filepath.Join(string(sys), tt.file)}, got); diff != "" {
			t.Errorf("iosched %q changed files (-want +got):\n%s", tt.args, diff)
		}
	}
}

// runIn runs the command in-process against sys with the given
// environment and udev database, and reports whether any file of the
// tree changed. Its Stderr is the first line only: the usage text
// follows usage errors.
func runIn(t *testing.T, sys sysfs.FS, environ map[string]string, db map[string]string, args ...string) (result, bool) {
	t.Helper()
	r, changed := runAll(t, sys, environ, db, args...)
	r.Stderr, _, _ = strings.Cut(r.Stderr, "\n")
	return r, changed
}

// runAll is runIn with the whole of stderr.
func runAll(t *testing.T, sys sysfs.FS, environ map[string]string, db map[string]string, args ...string) (result, bool) {
	t.Helper()
	var out, errb bytes.Buffer
	e := testEnv(t, sys, environ, db)
	e.stdout, e.stderr = &out, &errb
	before := snapshot(t, sys)
	code := run(e, args)
	return result{Code: code, Stdout: out.String(), Stderr: errb.String()}, !cmp.Equal(before, snapshot(t, sys))
}

// testEnv is the environment of an in-process run on sys; its lock
// directory is the test's own.
func testEnv(t testing.TB, sys sysfs.FS, environ map[string]string, db map[string]string) env {
	return env{
		stdout: io.Discard,
		stderr: io.Discard,
		getenv: func(k string) string { return environ[k] },
		environ: func() []string {
			var l []string
			for k, v := range environ {
				l = append(l, k+"="+v)
			}
			return l
		},
		sys:     sys,
		modules: func() kmod.Index { return kmod.Index(filepath.Join(string(sys), "nomodules")) },
		udev:    fakeUdev(db),
		devNum:  func(string) (uint32, uint32, error) { return 8, 1, nil },
		locks:   disklock.Dir{Path: filepath.Join(t.TempDir(), "iosched"), Owner: os.Geteuid()},
		geteuid: func() int { return 1000 },
		hz:      func() (jiffies.HZ, string, error) { return 250, "/proc/config.gz", nil },
	}
}

func snapshot(t testing.TB, sys sysfs.FS) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.Walk(string(sys), func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		m[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSet(t *testing.T) {
	tests := []struct {
		args []string
		want result
	}{
		{[]string{"set", "sda", "mq-deadline"}, result{Stdout: "sda: mq-deadline already active\n"}},
		{[]string{"set", "sda", "deadline"}, result{Stdout: "sda: mq-deadline already active\n"}},
		{[]string{"set", "sda1", "mq-deadline"}, result{Stdout: "sda: mq-deadline already active\n"}},
		{[]string{"set", "/dev/sda1", "mq-deadline"}, result{Stdout: "sda: mq-deadline already active\n"}},
		{[]string{"set", "nvme0n1", "none"}, result{Stdout: "nvme0n1: none already active\n"}},
		{[]string{"set", "--dry-run", "sda", "bfq"}, result{Stdout: "sda: mq-deadline -> bfq (dry run)\n"}},
		{[]string{"set", "--dry-run", "loop0", "nosuch,none"}, result{Stdout: "loop0: none already active (unavailable: nosuch)\n"}},
		{[]string{"set", "loop0", "nosuch"}, result{Code: 1, Stderr: "iosched: loop0: none of nosuch can be used (offers none mq-deadline kyber bfq): no wanted scheduler is available"}},
		{[]string{"set", "zram0", "none"}, result{Code: 1, Stderr: "iosched: zram0: no " + "SYS/block/zram0/queue/scheduler: this device has no I/O scheduler"}},
		{[]string{"set", "sdq", "none"}, result{Code: 1, Stderr: `iosched: no such block device "sdq": lstat SYS/class/block/sdq: no such file or directory`}},
		{[]string{"set", "../sda", "none"}, result{Code: 2, Stderr: `iosched: bad device name "../sda": give a kernel name, a /dev path or a /sys path`}},
		{[]string{"set", "sda", "Deadline"}, result{Code: 2, Stderr: `iosched: sda: scheduler list "Deadline": bad scheduler name "Deadline": byte 'D' not in [a-z0-9_-]`}},
		{[]string{"set", "sda", ""}, result{Code: 2, Stderr: `iosched: sda: scheduler list "": bad scheduler name: empty`}},
		{[]string{"set", "sda", "a-very-long-name"}, result{Code: 2, Stderr: `iosched: sda: scheduler list "a-very-long-name": bad scheduler name "a-very-long-name": longer than 15 bytes`}},
		{[]string{"set", "sda"}, result{Code: 2, Stderr: "iosched: set takes DEVICE and SCHEDULER[,SCHEDULER...] and/or ATTR=VALUE, got 1 arguments"}},
		{[]string{"set", "--force", "sda", "bfq"}, result{Code: 2, Stderr: "iosched: flag provided but not defined: -force"}},
		// Flags after the positional arguments; "--" ends them.
		{[]string{"set", "sda", "bfq", "--dry-run"}, result{Stdout: "sda: mq-deadline -> bfq (dry run)\n"}},
		{[]string{"set", "sda", "--dry-run", "bfq", "wbt_lat_usec=0"}, result{Stdout: "sda: mq-deadline -> bfq (dry run)\nsda: wbt_lat_usec ? -> 0 after the switch (dry run)\n"}},
		{[]string{"set", "--dry-run", "--", "sda", "bfq"}, result{Stdout: "sda: mq-deadline -> bfq (dry run)\n"}},
		{[]string{"set", "--", "sda", "--dry-run"}, result{Code: 1, Stderr: "iosched: sda: none of --dry-run can be used (offers none mq-deadline kyber bfq): no wanted scheduler is available"}},
		// Tunables are checked against the scheduler that will be active,
		// before anything is written.
		{[]string{"set", "loop0", "kyber", "iosched/fifo_batch=8"}, result{Code: 2, Stderr: `iosched: loop0: iosched/fifo_batch="8": fifo_batch is not a tunable of kyber (it has read_lat_nsec write_lat_nsec)`}},
		{[]string{"set", "sda", "none", "iosched/read_expire=250"}, result{Code: 2, Stderr: `iosched: sda: iosched/read_expire="250": scheduler none has no tunables`}},
		{[]string{"set", "sda", "iosched/read_lat_nsec=1000"}, result{Code: 2, Stderr: `iosched: sda: iosched/read_lat_nsec="1000": read_lat_nsec is not a tunable of mq-deadline (it has fifo_batch front_merges prio_aging_expire read_expire write_expire writes_starved)`}},
		{[]string{"set", "--dry-run", "sda", "bfq", "iosched/slice_idle=0"}, result{Stdout: "sda: mq-deadline -> bfq (dry run)\nsda: iosched/slice_idle -> 0 after the switch (dry run)\n"}},
		{[]string{"set", "--dry-run", "sda", "deadline", "iosched/read_expire=500"}, result{Stdout: "sda: mq-deadline already active\nsda: iosched/read_expire 500 already set\n"}},
		// Legacy names get a hint.
		{[]string{"set", "loop0", "noop"}, result{Code: 1, Stderr: `iosched: loop0: none of noop can be used (offers none mq-deadline kyber bfq): no wanted scheduler is available (noop: gone since Linux 5.0; "none" is its successor)`}},
		{[]string{"set", "loop0", "cfq,none"}, result{Stdout: "loop0: none already active (unavailable: cfq)\nloop0: hint: cfq: gone since Linux 5.0; \"bfq\" is its successor\n"}},
		// A hostile value is cut in the message.
		{[]string{"set", "sda", "read_ahead_kb=" + strings.Repeat("9", 100)}, result{Code: 2, Stderr: `iosched: sda: read_ahead_kb="` + strings.Repeat("9", 64) + `..." (100 bytes): bad value: the kernel refuses it (blk-sysfs.c:queue_var_store: kstrtoul, a decimal number up to 4294967295)`}},
		{[]string{"set", "sda", "mq-deadline", "wbt_lat_usec=-1", "read_ahead_kb=128", "iosched/read_expire=500"}, result{Stdout: "sda: mq-deadline already active\nsda: wbt_lat_usec 75000 already set\nsda: read_ahead_kb 128 already set\nsda: iosched/read_expire 500 already set\n"}},
		// Kept in whole pages: refused before any write, not "not applied" on every run.
		{[]string{"set", "sda", "read_ahead_kb=130"}, result{Code: 2, Stderr: `iosched: sda: read_ahead_kb="130": bad value: the kernel would keep 128 (blk-sysfs.c:queue_ra_store: kept in whole 4 KiB pages)`}},
		{[]string{"set", "sda", "write_cache=write back", "max_sectors_kb=1280", "nr_requests=64"}, result{Stdout: "sda: write_cache write back already set\nsda: max_sectors_kb 1280 already set\nsda: nr_requests 64 already set\n"}},
		{[]string{"set", "--dry-run", "sda", "bfq", "wbt_lat_usec=0", "rotational=1"}, result{Stdout: "sda: mq-deadline -> bfq (dry run)\nsda: wbt_lat_usec ? -> 0 after the switch (dry run)\nsda: rotational 1 already set\n"}},
		{[]string{"set", "sda", "nosuch", "iosched/read_expire=250"}, result{Code: 1, Stderr: "iosched: sda: none of nosuch can be used (offers none mq-deadline kyber bfq): no wanted scheduler is available"}},
		{[]string{"set", "sda", "nomerges=1"}, result{Code: 2, Stderr: "iosched: sda: SYS/block/sda/queue/nomerges: no such attribute on this queue"}},
		{[]string{"set", "sda", "dev=8:0"}, result{Code: 2, Stderr: `iosched: sda: unknown queue attribute "dev" (known: add_random discard_max_bytes io_timeout iostats iostats_passthrough max_sectors_kb nomerges nr_requests read_ahead_kb rotational rq_affinity stable_writes wbt_lat_usec write_cache, iosched/NAME)`}},
		{[]string{"set", "sda", "iosched/../../dev=1"}, result{Code: 2, Stderr: `iosched: sda: unknown queue attribute "iosched/../../dev" (known: add_random discard_max_bytes io_timeout iostats iostats_passthrough max_sectors_kb nomerges nr_requests read_ahead_kb rotational rq_affinity stable_writes wbt_lat_usec write_cache, iosched/NAME)`}},
		// A switch resets nr_requests: the dry run does not compare it with today's 64.
		{[]string{"set", "--dry-run", "sda", "bfq", "nr_requests=64"}, result{Stdout: "sda: mq-deadline -> bfq (dry run)\nsda: nr_requests ? -> 64 after the switch (dry run)\n"}},
		{[]string{"set", "sda", "wbt_lat_usec=-5"}, result{Code: 2, Stderr: `iosched: sda: wbt_lat_usec="-5": bad value: the kernel refuses it (blk-sysfs.c:queue_wb_lat_store: below -1 is EINVAL)`}},
		{[]string{"set", "sda", "none", "kyber"}, result{Code: 2, Stderr: `iosched: sda: "kyber": want ATTR=VALUE (the scheduler list goes first)`}},
		{[]string{"frobnicate"}, result{Code: 2, Stderr: `iosched: unknown command "frobnicate"`}},
		{nil, result{Code: 2, Stderr: "usage: iosched set [--dry-run] DEVICE [SCHEDULER[,SCHEDULER...]] [ATTR=VALUE...]"}},
	}
	for _, tt := range tests {
		sys := fixture.New(t, fixture.Standard()...)
		got, changed := runIn(t, sys, nil, nil, tt.args...)
		got.Stderr = strings.ReplaceAll(got.Stderr, string(sys), "SYS")
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("iosched %q (-want +got):\n%s", tt.args, diff)
		}
		// A fixture file takes the written name verbatim, so only a real
		// change may alter the tree.
		wantChange := strings.Contains(tt.want.Stdout, "->") && !strings.Contains(tt.want.Stdout, "dry run")
		if changed != wantChange {
			t.Errorf("iosched %q changed the tree: %v, want %v", tt.args, changed, wantChange)
		}
	}
}

func TestUdev(t *testing.T) {
	loop := map[string]string{"ACTION": "change", "SUBSYSTEM": "block", "DEVTYPE": "disk",
		"DEVPATH": "/devices/virtual/block/loop0", "IOSCHED_SCHEDULER": "none"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range loop {
			m[a] = b
		}
		m[k] = v
		return m
	}
	withAll := func(kv map[string]string) map[string]string {
		m := with("", "")
		delete(m, "")
		for k, v := range kv {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name string
		env  map[string]string
		want result
	}{
		{"no-op", loop, result{Stdout: "loop0: none already active\n"}},
		{"add", with("ACTION", "add"), result{Stdout: "loop0: none already active\n"}},
		{"remove", with("ACTION", "remove"), result{}},
		{"partition", with("DEVTYPE", "partition"), result{}},
		{"partition devpath", with("DEVPATH", "/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda1"), result{}},
		{"other subsystem", with("SUBSYSTEM", "net"), result{}},
		{"empty policy", with("IOSCHED_SCHEDULER", ""), result{}},
		{"no scheduler file", with("DEVPATH", "/devices/virtual/block/zram0"), result{Stdout: "zram0: no I/O scheduler, nothing to do\n"}},
		{"gone", with("DEVPATH", "/devices/virtual/block/loop9"), result{Stdout: "/devices/virtual/block/loop9: went away, nothing done\n"}},
		{"command line entry for the disk", with("IOSCHED_CMDLINE", "sda:bfq/loop0:none,keep"), result{Stdout: "loop0: none already active\n"}},
		{"command line entry for every disk", with("IOSCHED_CMDLINE", "sda:bfq/nosuch,keep"), result{Stdout: "loop0: none kept (unavailable: nosuch)\n"}},
		{"command line without an entry", withAll(map[string]string{"IOSCHED_CMDLINE": "sda:bfq", "IOSCHED_SCHEDULER": "nosuch,none"}),
			result{Stdout: "loop0: none already active (unavailable: nosuch)\n"}},
		{"command line only", withAll(map[string]string{"IOSCHED_CMDLINE": "loop0:none", "IOSCHED_SCHEDULER": ""}), result{Stdout: "loop0: none already active\n"}},
		{"malformed command line", with("IOSCHED_CMDLINE", "loop0:"), result{Code: 1, Stdout: "loop0: none already active\n",
			Stderr: `iosched: loop0: kernel command line "iosched.scheduler=loop0:": entry "loop0:": want DISK:LIST or LIST, entries joined by /; the rule policy stands (none)`}},
		{"not a disk", with("DEVPATH", "/devices/virtual/net/lo"), result{Code: 1, Stderr: `iosched: udev: DEVPATH not a block device "/devices/virtual/net/lo": lo is not a disk in SYS/block`}},
		{"bad policy", with("IOSCHED_SCHEDULER", "kyber;rm"), result{Code: 1, Stderr: `iosched: loop0: IOSCHED_SCHEDULER="kyber;rm": scheduler list "kyber;rm": bad scheduler name "kyber;rm": byte ';' not in [a-z0-9_-]`}},
		{"bad devpath", with("DEVPATH", "/devices/../block/loop0"), result{Code: 2, Stderr: `iosched: bad device name "/devices/../block/loop0": contains ".."`}},
		{"attributes", with("IOSCHED_ATTR_read_ahead_kb", "128"), result{Stdout: "loop0: none already active\nloop0: read_ahead_kb 128 already set\n"}},
		{"bad attribute", with("IOSCHED_ATTR_dev", "1"), result{Code: 1, Stdout: "loop0: none already active\n", Stderr: `iosched: loop0: IOSCHED_ATTR_dev="1": unknown queue attribute "dev" (known: add_random discard_max_bytes io_timeout iostats iostats_passthrough max_sectors_kb nomerges nr_requests read_ahead_kb rotational rq_affinity stable_writes wbt_lat_usec write_cache, iosched/NAME)`}},
		{"value the kernel would not keep", with("IOSCHED_ATTR_read_ahead_kb", "130"), result{Code: 1, Stdout: "loop0: none already active\n", Stderr: `iosched: loop0: IOSCHED_ATTR_read_ahead_kb: read_ahead_kb="130": bad value: the kernel would keep 128 (blk-sysfs.c:queue_ra_store: kept in whole 4 KiB pages)`}},
		{"no devpath", with("DEVPATH", ""), result{Code: 2, Stderr: "iosched: udev: DEVPATH is not set (run from a udev rule, or use 'iosched set')"}},
	}
	for _, tt := range tests {
		sys := fixture.New(t, fixture.Standard()...)
		all, changed := runAll(t, sys, tt.env, nil, "udev")
		if strings.Contains(all.Stderr, "usage") {
			t.Errorf("%s: usage text in udev's log:\n%s", tt.name, all.Stderr)
		}
		got := all
		got.Stderr, _, _ = strings.Cut(all.Stderr, "\n")
		got.Stderr = strings.ReplaceAll(got.Stderr, string(sys), "SYS")
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: iosched udev (-want +got):\n%s", tt.name, diff)
		}
		if wantChange := strings.Contains(tt.want.Stdout, "->"); changed != wantChange {
			t.Errorf("%s: changed the tree: %v, want %v", tt.name, changed, wantChange)
		}
	}
}

func TestStatus(t *testing.T) {
	sys := fixture.New(t, fixture.Standard()...)
	db := map[string]string{
		"sda/IOSCHED_SCHEDULER":       "bfq,mq-deadline",
		"sda/IOSCHED_CLASS_SCHEDULER": "bfq,mq-deadline",
		"nvme0n1/IOSCHED_SCHEDULER":   "none",
		"loop0/IOSCHED_SCHEDULER":     "",
	}
	got, changed := runIn(t, sys, nil, db, "status")
	want := result{Stdout: `DISK     ACTIVE       OFFERED                     ROTATIONAL  WANTED           FROM   HOLDS
loop0    none         none,mq-deadline,kyber,bfq  no          (opted out)      -      -
nvme0n1  none         none,mq-deadline,kyber,bfq  no          none             rule   yes
sda      mq-deadline  none,mq-deadline,kyber,bfq  yes         bfq,mq-deadline  class  no
zram0    -            -                           no          -                -      -
`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("iosched status (-want +got):\n%s", diff)
	}
	if changed {
		t.Error("status changed the tree")
	}

	got, _ = runIn(t, sys, nil, db, "status", "--json")
	var rows []status.Row
	if err := json.Unmarshal([]byte(got.Stdout), &rows); err != nil {
		t.Fatalf("status --json: %v\n%s", err, got.Stdout)
	}
	yes, no := true, false
	s := func(v string) *string { return &v }
	wantRows := []status.Row{
		{Disk: "loop0", Active: "none", Offered: []string{"none", "mq-deadline", "kyber", "bfq"}, Rotational: &no, Wanted: s("")},
		{Disk: "nvme0n1", Active: "none", Offered: []string{"none", "mq-deadline", "kyber", "bfq"}, Rotational: &no, Wanted: s("none"), From: "rule", Holds: &yes},
		{Disk: "sda", Active: "mq-deadline", Offered: []string{"none", "mq-deadline", "kyber", "bfq"}, Rotational: &yes, Wanted: s("bfq,mq-deadline"), From: "class", Holds: &no,
			Drift: []string{"mq-deadline -> bfq"}},
		{Disk: "zram0", Rotational: &no},
	}
	if diff := cmp.Diff(wantRows, rows, cmp.AllowUnexported(status.Row{})); diff != "" {
		t.Errorf("iosched status --json (-want +got):\n%s", diff)
	}
}

// TestStatusEscapes: a recorded value with escape sequences, tabs or
// bytes that are not UTF-8 comes out quoted in the table, and as valid
// JSON that decodes to U+FFFD for the bad byte.
func TestStatusEscapes(t *testing.T) {
	sys := fixture.New(t, fixture.Standard()...)
	hostile := "bfq\x1b[2J\t\xff"
	db := map[string]string{"nvme0n1/IOSCHED_SCHEDULER": hostile}
	got, _ := runIn(t, sys, nil, db, "status")
	if strings.ContainsAny(got.Stdout, "\x1b\t") || strings.Contains(got.Stdout, "\xff") {
		t.Errorf("status prints the value raw:\n%q", got.Stdout)
	}
	if !strings.Contains(got.Stdout, `"bfq\x1b[2J\t\xff"`) {
		t.Errorf("status does not show the value quoted:\n%s", got.Stdout)
	}
	got, _ = runIn(t, sys, nil, db, "status", "--json")
	var rows []status.Row
	if err := json.Unmarshal([]byte(got.Stdout), &rows); err != nil {
		t.Fatalf("status --json: %v\n%s", err, got.Stdout)
	}
	if !utf8.ValidString(got.Stdout) || strings.ContainsAny(got.Stdout, "\x1b\t") {
		t.Errorf("status --json is not escaped:\n%q", got.Stdout)
	}
	for _, r := range rows {
		if r.Disk == "nvme0n1" && (r.Wanted == nil || *r.Wanted != "bfq\x1b[2J\t\uFFFD") {
			t.Errorf("status --json: nvme0n1 wanted %v, want the value with U+FFFD", r.Wanted)
		}
	}
}

// TestStatusOtherWriters: a disk whose policy does not hold, with another
// writer configured for it and for what drifted, names that writer in
// the table, in --json and as the cause in --check; writers for other
// disks, other attributes or a profile tuned does not run are not named.
func TestStatusOtherWriters(t *testing.T) {
	sys := fixture.New(t, fixture.Standard()...)
	root := t.TempDir()
	files := map[string]string{
		"etc/tuned/active_profile":            "mine\n",
		"etc/tuned/profiles/mine/tuned.conf":  "[disk]\ndevices=sd*\nelevator=kyber\n",
		"etc/tuned/profiles/other/tuned.conf": "[disk]\nelevator=bfq\n",
		"etc/tlp.conf":                        "DISK_DEVICES=\"nvme0n1\"\nDISK_IOSCHED=\"bfq\"\n",
		"etc/tmpfiles.d/ra.conf":              "w /sys/block/loop0/queue/read_ahead_kb - - - - 512\n",
		"etc/tmpfiles.d/rotational-sda.conf":  "w /sys/block/sda/queue/rotational - - - - 1\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := map[string]string{
		"sda/IOSCHED_SCHEDULER":            "bfq,mq-deadline", // mq-deadline runs: drift
		"nvme0n1/IOSCHED_SCHEDULER":        "none",            // holds: TLP not named
		"loop0/IOSCHED_ATTR_read_ahead_kb": "256",             // 128 now: drift
	}
	runStatus := func(args ...string) (result, env) {
		var out, errb bytes.Buffer
		e := testEnv(t, sys, nil, db)
		e.stdout, e.stderr, e.root = &out, &errb, root
		code := run(e, append([]string{"status"}, args...))
		return result{Code: code, Stdout: out.String(), Stderr: errb.String()}, e
	}
	got, _ := runStatus()
	_, tail, _ := strings.Cut(got.Stdout, "zram0")
	_, tail, _ = strings.Cut(tail, "\n")
	want := `loop0: drifted; systemd-tmpfiles (/etc/tmpfiles.d/ra.conf:1) writes read_ahead_kb="512"
sda: drifted; tuned (/etc/tuned/profiles/mine/tuned.conf:3) writes scheduler="kyber"
`
	if diff := cmp.Diff(want, tail); diff != "" {
		t.Errorf("status: the lines after the table (-want +got):\n%s\n%s", diff, got.Stdout)
	}
	got, _ = runStatus("--check")
	if got.Code != 1 || !strings.Contains(got.Stderr, "sda: policy does not hold: mq-deadline -> bfq; another writer is configured: tuned (/etc/tuned/profiles/mine/tuned.conf:3)") {
		t.Errorf("status --check: exit %d, stderr %q; want 1 naming tuned as the cause", got.Code, got.Stderr)
	}
	got, _ = runStatus("--json")
	var rows []status.Row
	if err := json.Unmarshal([]byte(got.Stdout), &rows); err != nil {
		t.Fatal(err)
	}
	named := map[string]int{}
	for _, r := range rows {
		named[r.Disk] = len(r.Writers)
	}
	if diff := cmp.Diff(map[string]int{"loop0": 1, "nvme0n1": 0, "sda": 1, "zram0": 0}, named); diff != "" {
		t.Errorf("status --json: writers per disk (-want +got):\n%s", diff)
	}
}

// TestUdevReadsModuleIndexOnce: a change asked for past a scheduler the
// disk does not offer looks that name up in the module index in the
// read-only pass; the pass under the lock takes the same answer, since
// the index is what a run that needs a module spends most on.
func TestUdevReadsModuleIndexOnce(t *testing.T) {
	sys := fixture.New(t, fixture.Standard()...)
	environ := map[string]string{"ACTION": "add", "SUBSYSTEM": "block", "DEVTYPE": "disk",
		"DEVPATH": "/devices/virtual/block/loop0", "IOSCHED_SCHEDULER": "nosuch,mq-deadline"}
	e := testEnv(t, sys, environ, nil)
	reads := 0
	modules := e.modules
	e.modules = func() kmod.Index { reads++; return modules() }
	var errb bytes.Buffer
	e.stderr = &errb
	before := snapshot(t, sys)
	run(e, []string{"udev"})
	if diff := cmp.Diff([]string{filepath.Join(string(sys), "devices/virtual/block/loop0/queue/scheduler")},
		changedFiles(before, snapshot(t, sys))); diff != "" {
		t.Fatalf("udev changed files (-want +got):\n%s\nstderr: %s", diff, errb.String())
	}
	if reads != 1 {
		t.Errorf("module index read %d times in one udev run, want 1", reads)
	}
}
