package main

import (
	"errors"
	"flag"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/iosched/iosched/helper/internal/fixture"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args    []string
		wantPos []string
		wantDry bool
		wantN   int
	}{
		{nil, nil, false, 1},
		{[]string{"sda", "bfq"}, []string{"sda", "bfq"}, false, 1},
		{[]string{"--dry-run", "sda", "bfq"}, []string{"sda", "bfq"}, true, 1},
		{[]string{"sda", "--dry-run", "bfq"}, []string{"sda", "bfq"}, true, 1},
		{[]string{"sda", "bfq", "-dry-run", "-n", "3"}, []string{"sda", "bfq"}, true, 3},
		{[]string{"sda", "-n=3", "bfq"}, []string{"sda", "bfq"}, false, 3},
		{[]string{"sda", "--", "--dry-run", "-n"}, []string{"sda", "--dry-run", "-n"}, false, 1},
		{[]string{"--", "--"}, []string{"--"}, false, 1},
		{[]string{"-", "sda"}, []string{"-", "sda"}, false, 1},
	}
	for _, tt := range tests {
		fs := newFlagSet("test")
		dry := fs.Bool("dry-run", false, "")
		n := fs.Int("n", 1, "")
		pos, err := parseArgs(fs, tt.args)
		if err != nil {
			t.Errorf("parseArgs(%q): %v", tt.args, err)
			continue
		}
		type res struct {
			Pos []string
			Dry bool
			N   int
		}
		if diff := cmp.Diff(res{tt.wantPos, tt.wantDry, tt.wantN}, res{pos, *dry, *n}); diff != "" {
			t.Errorf("parseArgs(%q) (-want +got):\n%s", tt.args, diff)
		}
	}
	for _, args := range [][]string{{"sda", "--bogus"}, {"-n"}, {"sda", "-n", "x"}} {
		var ue usageError
		if _, err := parseArgs(newFlagSet("test"), args); !errors.As(err, &ue) {
			t.Errorf("parseArgs(%q) = %v, want a usage error", args, err)
		}
	}
	if _, err := parseArgs(newFlagSet("test"), []string{"sda", "--help"}); !errors.Is(err, errHelp) {
		t.Errorf("parseArgs(--help) = %v, want errHelp", err)
	}
	if _, err := parseArgs(newFlagSet("test"), []string{"-h"}); errors.Is(err, flag.ErrHelp) || !errors.Is(err, errHelp) {
		t.Errorf("parseArgs(-h) = %v, want errHelp", err)
	}
}

// TestHelp: every command has its own usage, printed on stdout with exit
// 0 by `help CMD`, `CMD --help` and `CMD -h`; the top usage lists them all.
func TestHelp(t *testing.T) {
	sys := fixture.New(t, fixture.Standard()...)
	top, _ := runAll(t, sys, nil, nil, "help")
	if top.Code != 0 || top.Stderr != "" {
		t.Fatalf("iosched help = %+v", top)
	}
	for _, c := range commands {
		if !strings.Contains(top.Stdout, "iosched "+c.synopsis+"\n") {
			t.Errorf("top usage lacks %q:\n%s", c.synopsis, top.Stdout)
		}
		want := result{Stdout: "usage: iosched " + c.synopsis + "\n\n" + c.help}
		for _, args := range [][]string{{"help", c.name}, {c.name, "--help"}, {c.name, "-h"}} {
			got, changed := runAll(t, sys, map[string]string{"ACTION": "add"}, nil, args...)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("iosched %q (-want +got):\n%s", args, diff)
			}
			if changed {
				t.Errorf("iosched %q changed the tree", args)
			}
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}} {
		if got, _ := runAll(t, sys, nil, nil, args...); got != top {
			t.Errorf("iosched %q = %+v, want the top usage", args, got)
		}
	}
	got, _ := runIn(t, sys, nil, nil, "help", "nosuch")
	if diff := cmp.Diff(result{Code: 2, Stderr: `iosched: help: unknown command "nosuch"`}, got); diff != "" {
		t.Errorf("iosched help nosuch (-want +got):\n%s", diff)
	}
	// A usage error prints that command's usage only.
	got, _ = runAll(t, sys, nil, nil, "status", "sda")
	if diff := cmp.Diff(result{Code: 2, Stderr: "iosched: status takes no arguments\nusage: iosched status [--check] [--format=table|json|prometheus]\n"}, got); diff != "" {
		t.Errorf("iosched status sda (-want +got):\n%s", diff)
	}
}

func TestVersion(t *testing.T) {
	sys := fixture.New(t, fixture.Standard()...)
	for _, args := range [][]string{{"--version"}, {"version"}} {
		got, _ := runAll(t, sys, nil, nil, args...)
		if diff := cmp.Diff(result{Stdout: "iosched devel\n"}, got); diff != "" {
			t.Errorf("iosched %q (-want +got):\n%s", args, diff)
		}
	}
}

// TestProbeNeedsRoot: one message, no path repeated.
func TestProbeNeedsRoot(t *testing.T) {
	sys := fixture.New(t, fixture.Standard()...)
	got, _ := runAll(t, sys, nil, nil, "probe")
	want := result{Code: 1, Stderr: "iosched: probe needs root: it attaches a loop device and writes its queue attributes\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("iosched probe as non-root (-want +got):\n%s", diff)
	}
}

// failWriter fails every write, as stdout on a full disk or a closed pipe.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestOutputFailure: a command whose answer cannot be written exits 1.
func TestOutputFailure(t *testing.T) {
	for _, args := range [][]string{
		{"set", "sda", "mq-deadline"},
		{"set", "--dry-run", "sda", "bfq"},
		{"status"},
		{"version"},
		{"help", "set"},
		{"set", "--help"},
		{"apply"},
		{"apply", "--dry-run", "sda"},
	} {
		sys := fixture.New(t, fixture.Standard()...)
		e := testEnv(t, sys, nil, map[string]string{"sda/IOSCHED_SCHEDULER": "mq-deadline"})
		var errb strings.Builder
		e.stdout, e.stderr = failWriter{}, &errb
		if code := run(e, args); code != exitFailure || !strings.Contains(errb.String(), "no space left on device") {
			t.Errorf("iosched %q with a failing stdout: exit %d, stderr %q; want 1 and the write error", args, code, errb.String())
		}
	}
}

// TestUdevKeepsGoing: with good and bad properties mixed, every good one
// is applied (the scheduler first), each bad one reported on a line
// naming the disk, and the exit status is 1. No usage text goes to the
// log.
func TestUdevKeepsGoing(t *testing.T) {
	ev := map[string]string{"ACTION": "change", "SUBSYSTEM": "block", "DEVTYPE": "disk",
		"DEVPATH":                                  "/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda",
		"IOSCHED_SCHEDULER":                        "deadline",
		"IOSCHED_ATTR_read_ahead_kb":               "256",
		"IOSCHED_ATTR_dev":                         "8:0",
		"IOSCHED_ATTR_nr_requests":                 "lots",
		"IOSCHED_ATTR_rotational":                  "1",
		"IOSCHED_TUNE_read_lat_nsec":               "1000",
		"IOSCHED_TUNE_read_expire":                 "240",
		"IOSCHED_ATTR_wbt_lat_usec":                strings.Repeat("7", 200),
		"IOSCHED_ATTR_" + strings.Repeat("z", 100): "1",
	}
	sys := fixture.New(t, fixture.Standard()...)
	before := snapshot(t, sys)
	got, _ := runAll(t, sys, ev, nil, "udev")
	want := result{Code: 1,
		Stdout: "sda: mq-deadline already active\nsda: rotational 1 already set\nsda: read_ahead_kb 128 -> 256\nsda: iosched/read_expire 500 -> 240\n",
		Stderr: `iosched: sda: IOSCHED_ATTR_dev="8:0": unknown queue attribute "dev" (known: add_random discard_max_bytes io_timeout iostats iostats_passthrough max_sectors_kb nomerges nr_requests read_ahead_kb rotational rq_affinity stable_writes wbt_lat_usec write_cache, iosched/NAME)
iosched: sda: IOSCHED_ATTR_nr_requests: nr_requests="lots": bad value: the kernel refuses it (blk-sysfs.c:queue_var_store: kstrtoul, a decimal number up to 4294967295)
iosched: sda: IOSCHED_ATTR_wbt_lat_usec: wbt_lat_usec="` + strings.Repeat("7", 64) + `..." (200 bytes): bad value: the kernel refuses it (blk-sysfs.c:queue_wb_lat_store: kstrtos64, microseconds, 0 to disable or -1 for the default)
iosched: sda: "IOSCHED_ATTR_` + strings.Repeat("z", 51) + `"... (113 bytes)="1": unknown queue attribute "` + strings.Repeat("z", 64) + `..." (100 bytes) (known: add_random discard_max_bytes io_timeout iostats iostats_passthrough max_sectors_kb nomerges nr_requests read_ahead_kb rotational rq_affinity stable_writes wbt_lat_usec write_cache, iosched/NAME)
iosched: sda: IOSCHED_TUNE_read_lat_nsec="1000": read_lat_nsec is not a tunable of mq-deadline (it has fifo_batch front_merges prio_aging_expire read_expire write_expire writes_starved); skipped
`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("iosched udev with good and bad properties (-want +got):\n%s", diff)
	}
	changed := changedFiles(before, snapshot(t, sys))
	slices.Sort(changed)
	q := string(sys) + "/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/queue/"
	if diff := cmp.Diff([]string{q + "iosched/read_expire", q + "read_ahead_kb"}, changed); diff != "" {
		t.Errorf("files changed (-want +got):\n%s", diff)
	}
}

// TestSynopsisInStep: the commands table is the one source of the
// synopsis; the package comment, the man page's SYNOPSIS and COMMANDS
// and the bash completion's command lists must say the same.
func TestSynopsisInStep(t *testing.T) {
	var want []string
	for _, c := range commands {
		want = append(want, "iosched "+c.synopsis)
	}
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// main.go's "Usage:" block: one "//\tiosched ..." line a command.
	var doc []string
	for _, l := range strings.Split(read("main.go"), "\n") {
		if s, ok := strings.CutPrefix(l, "//\tiosched "); ok {
			doc = append(doc, "iosched "+s)
		}
	}
	if diff := cmp.Diff(want, doc); diff != "" {
		t.Errorf("main.go's usage comment (-commands +comment):\n%s", diff)
	}
	// The man page, markup dropped.
	plain := strings.NewReplacer("**", "", "*", "", `\_`, "_").Replace
	man := read("../../../man/iosched.8.md")
	section := func(name string) []string {
		_, rest, ok := strings.Cut(man, "\n# "+name+"\n")
		if !ok {
			t.Fatalf("man page: no %s section", name)
		}
		rest, _, _ = strings.Cut(rest, "\n# ")
		return strings.Split(rest, "\n")
	}
	var synopsis, heads []string
	for _, l := range section("SYNOPSIS") {
		if strings.HasPrefix(l, "**iosched ") {
			synopsis = append(synopsis, plain(l))
		}
	}
	if diff := cmp.Diff(want, synopsis); diff != "" {
		t.Errorf("man page SYNOPSIS (-commands +man):\n%s", diff)
	}
	for _, l := range section("COMMANDS") {
		if strings.HasPrefix(l, "**") {
			l, _, _ = strings.Cut(l, ", **--") // "**version**, **--version**"
			heads = append(heads, "iosched "+plain(l))
		}
	}
	if diff := cmp.Diff(want, heads); diff != "" {
		t.Errorf("man page COMMANDS (-commands +man):\n%s", diff)
	}
	// The completion offers every command, in the table's order.
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	comp := read("../../../completion/iosched.bash")
	if n := strings.Count(comp, `"`+strings.Join(names, " ")); n != 2 {
		t.Errorf("completion/iosched.bash lists %q %d times, want 2 (first word, help's argument)", strings.Join(names, " "), n)
	}
}
