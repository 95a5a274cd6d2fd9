package rulesaudit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPlanFixConvert: the converted text of a source, and the refusals,
// against a kernel that has a tunable iosched's table lacks or not.
func TestPlanFixConvert(t *testing.T) {
	head := "# Converted in place by `iosched audit --fix`: its ATTR{queue/...} writes are\n" +
		"# now the properties iosched applies, writing only what would change.\n" +
		"# `iosched audit --undo` puts the original back.\n"
	tests := []struct {
		name    string
		file    string
		tunable string // a tunable the fixture kernel has
		renamed bool   // RenamedSchedulers
		want    string // the converted text without head, or the refusal
	}{
		{"unknown tunable refused", "tunable-after.rules", "", false,
			"SRC:6: not converted: queue/iosched/not_a_tunable: no disk of the running kernel has it (SYS/block/*/queue/iosched/not_a_tunable) and iosched's table does not know it"},
		// Only matches would be left of the noop rule: a line with no
		// effect, which udevadm verify fails; a comment says what it was.
		{"tunable the kernel has, noop dropped as its write fails today", "tunable-after.rules", "not_a_tunable", false,
			"# A scheduler tunable in its own rule after the switch: converted too, so\n" +
				"# that iosched writes it after the switch that resets it.\n" +
				`ACTION=="add|change", KERNEL=="sd*", ENV{CLASS}="slow"` + "\n" +
				"# dropped by `iosched audit --fix`: " + `ACTION=="add|change", ENV{CLASS}=="slow", ATTR{queue/scheduler}="noop"` + "\n" +
				`ACTION=="add|change", ENV{CLASS}=="slow", ENV{IOSCHED_TUNE_fifo_batch}="8"` + "\n" +
				`ACTION=="add|change", ENV{CLASS}=="slow", ENV{IOSCHED_TUNE_not_a_tunable}="1", ENV{IOSCHED_SETTINGS}="1"` + "\n"},
		{"tunable the kernel has, noop as none when asked", "tunable-after.rules", "not_a_tunable", true,
			"# A scheduler tunable in its own rule after the switch: converted too, so\n" +
				"# that iosched writes it after the switch that resets it.\n" +
				`ACTION=="add|change", KERNEL=="sd*", ENV{CLASS}="slow"` + "\n" +
				`ACTION=="add|change", ENV{CLASS}=="slow", ENV{IOSCHED_SCHEDULER}="none", ENV{IOSCHED_SCHEDULER_SET}="1"` + "\n" +
				`ACTION=="add|change", ENV{CLASS}=="slow", ENV{IOSCHED_TUNE_fifo_batch}="8"` + "\n" +
				`ACTION=="add|change", ENV{CLASS}=="slow", ENV{IOSCHED_TUNE_not_a_tunable}="1", ENV{IOSCHED_SETTINGS}="1"` + "\n"},
		{"continuation and a guard removed", "continuation.rules", "", false, ""},
	}
	for _, tt := range tests {
		root := t.TempDir()
		etc, lib, sys := filepath.Join(root, "etc"), filepath.Join(root, "lib"), filepath.Join(root, "sys")
		// A file name with a newline never reaches rule text.
		src := filepath.Join(lib, "60-x\nRUN+=\"evil\".rules")
		for _, d := range []string{etc, lib, filepath.Join(sys, "block", "sda", "queue", "iosched")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if tt.tunable != "" {
			if err := os.WriteFile(filepath.Join(sys, "block", "sda", "queue", "iosched", tt.tunable), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		copyTestdata(t, tt.file, src, 0o644)
		plan, err := PlanFix(FixInput{Read: []string{src}, Fix: []string{src}, Target: etc, Sys: sys, RenamedSchedulers: tt.renamed})
		var got string
		switch {
		case err != nil:
			got = strings.NewReplacer(src, "SRC", sys, "SYS").Replace(err.Error())
		case len(plan) != 1:
			t.Fatalf("%s: %d changes", tt.name, len(plan))
		default:
			got = strings.TrimPrefix(string(plan[0].Data), head)
			if strings.Contains(got, "evil") {
				t.Errorf("%s: the file name reached the rules:\n%s", tt.name, got)
			}
			if tt.want == "" {
				// Every line of the source is there, in order.
				src, _ := os.ReadFile(filepath.Join("testdata", tt.file))
				if n, m := strings.Count(got, "\n"), strings.Count(string(src), "\n"); n != m {
					t.Errorf("%s: %d lines, the source has %d:\n%s", tt.name, n, m, got)
				}
				continue
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestChoiceGuard: the "disk has a choice" guard stays in the converted
// rule, which keeps its meaning: no write changes whether a disk has one.
func TestChoiceGuard(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "60-sched.rules")
	rule := `ACTION=="add|change", KERNEL=="sd*", ATTR{queue/scheduler}!="none", ATTR{queue/scheduler}="mq-deadline"` + "\n"
	if err := os.WriteFile(src, []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := PlanFix(FixInput{Read: []string{src}, Fix: []string{src}, Target: dir, Sys: dir})
	if err != nil || len(plan) != 1 {
		t.Fatalf("PlanFix = %d changes, %v; want 1", len(plan), err)
	}
	want := `ACTION=="add|change", KERNEL=="sd*", ATTR{queue/scheduler}!="none", ENV{IOSCHED_SCHEDULER}="mq-deadline", ENV{IOSCHED_SCHEDULER_SET}="1"` + "\n"
	if got := strings.TrimPrefix(string(plan[0].Data), convertedHeader); got != want {
		t.Errorf("converted:\n%s\nwant:\n%s", got, want)
	}
}

// TestCrossCheck: what a later file does with a converted attribute.
func TestCrossCheck(t *testing.T) {
	const src = `ACTION=="add|change", KERNEL=="sd*", ATTR{queue/scheduler}="bfq"` + "\n"
	tests := []struct {
		later string
		want  string // "" when converted
	}{
		{`TEST=="queue/scheduler", ENV{HAS_SCHED}="1"`, ""},
		{`ATTR{queue/scheduler}=="none", GOTO="x"` + "\n" + `LABEL="x"`, ""}, // a disk with no choice, which no write changes
		{`ATTR{queue/scheduler}=="*[[]bfq[]]*", ENV{SLOW}="1"`,
			`SRC:1: not converted: LATER:1: ATTR{queue/scheduler}=="*[[]bfq[]]*" reads queue/scheduler, which this rule writes: converted, iosched would write it only after all rules ran`},
		{`PROGRAM=="/bin/cat /sys/block/%k/queue/scheduler", RESULT=="*bfq*"`,
			`SRC:1: not converted: LATER:1: PROGRAM=="/bin/cat /sys/block/%k/queue/scheduler" reads queue/scheduler, which this rule writes: converted, iosched would write it only after all rules ran`},
		{`ACTION=="add", ATTR{queue/iosched/slice_idle}="0"`,
			`SRC:1: not converted: LATER:1 writes queue/iosched/slice_idle after it and is not converted (no change event reaches it, or its file is not fixed): converted, this rule's write would come after it rather than before`},
		// A device cannot match both KERNEL patterns: the read is of
		// another disk.
		{`KERNEL=="bcache*", ATTR{queue/scheduler}=="*[[]bfq[]]*", ENV{SLOW}="1"`, ""},
		{`KERNEL=="nvme*|vd*", ATTR{queue/scheduler}=="*[[]bfq[]]*", ENV{SLOW}="1"`, ""},
		{`KERNEL=="s?a", ATTR{queue/scheduler}=="*[[]bfq[]]*", ENV{SLOW}="1"`,
			`SRC:1: not converted: LATER:1: ATTR{queue/scheduler}=="*[[]bfq[]]*" reads queue/scheduler, which this rule writes: converted, iosched would write it only after all rules ran`},
		// The switch decides which tunables exist and what they read.
		{`TEST=="queue/iosched/slice_idle", ENV{IDLE}="1"`,
			`SRC:1: not converted: LATER:1: TEST=="queue/iosched/slice_idle" reads queue/scheduler, which this rule writes: converted, iosched would write it only after all rules ran`},
		{`ATTR{queue/iosched/slice_idle}=="0", ENV{IDLE}="1"`,
			`SRC:1: not converted: LATER:1: ATTR{queue/iosched/slice_idle}=="0" reads queue/scheduler, which this rule writes: converted, iosched would write it only after all rules ran`},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		a, b := filepath.Join(dir, "50-src.rules"), filepath.Join(dir, "70-later.rules")
		for p, data := range map[string]string{a: src, b: tt.later + "\n"} {
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := PlanFix(FixInput{Read: []string{a, b}, Fix: []string{a}, Target: filepath.Join(dir, "etc"), Sys: dir})
		got := ""
		if err != nil {
			got = strings.NewReplacer(a, "SRC", b, "LATER").Replace(err.Error())
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("later rule %q (-want +got):\n%s", tt.later, diff)
		}
	}
}

// TestUnknownScheduler: a write of a scheduler iosched does not know
// and no disk of the running kernel offers fails today, so the
// scheduler an earlier rule chose stays; converted, it would replace
// that choice. It is converted only on a kernel that offers it; an
// earlier write of the same disks is refused with it, since on a kernel
// that has the scheduler the unconverted write would now come first.
func TestUnknownScheduler(t *testing.T) {
	const src = `ACTION=="add|change", KERNEL=="sd[a-z]*", ATTR{queue/rotational}=="0", ATTR{queue/scheduler}="mq-deadline"` + "\n"
	const later = `ACTION=="add|change", KERNEL=="sd[a-z]*|nvme[0-9]*", ATTR{queue/scheduler}="adios"` + "\n"
	tests := []struct {
		offered string // the fixture disk's queue/scheduler
		want    string // "" when both convert
	}{
		{"[mq-deadline] kyber bfq none",
			"SRC:1: not converted: LATER:1 writes queue/scheduler after it and is not converted (no change event reaches it, or its file is not fixed): converted, this rule's write would come after it rather than before\n" +
				`LATER:1: not converted: ATTR{queue/scheduler}="adios": no disk of the running kernel offers "adios" (SYS/block/*/queue/scheduler) and iosched does not know it: the write fails here and leaves the scheduler an earlier rule chose, which a converted write would replace`},
		{"[mq-deadline] kyber adios none", ""},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		sys := filepath.Join(dir, "sys")
		q := filepath.Join(sys, "block", "sda", "queue")
		if err := os.MkdirAll(q, 0o755); err != nil {
			t.Fatal(err)
		}
		a, b := filepath.Join(dir, "60-src.rules"), filepath.Join(dir, "61-later.rules")
		for p, data := range map[string]string{a: src, b: later, filepath.Join(q, "scheduler"): tt.offered + "\n"} {
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		plan, err := PlanFix(FixInput{Read: []string{a, b}, Fix: []string{a, b}, Target: filepath.Join(dir, "etc"), Sys: sys})
		got := ""
		if err != nil {
			got = strings.NewReplacer(a, "SRC", b, "LATER", sys, "SYS").Replace(err.Error())
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("offered %q (-want +got):\n%s", tt.offered, diff)
		}
		if tt.want == "" && len(plan) != 2 {
			t.Errorf("offered %q: %d files converted, want 2", tt.offered, len(plan))
		}
	}
}

// TestEarlierUnconvertedScheduler: udevd reads a sysfs attribute once per
// event and keeps the value (sd-device's cache), and its ATTR{} writes do
// not update that value in systemd 257. A rule that reads
// queue/scheduler before an unconverted rule writes it, as the corpus's
// 60-io-scheduler.rules does, leaves RunRules comparing the scheduler of
// the event's start: when that is the converted rule's choice, the
// helper would not start and the unconverted write would stay. Such a
// converted scheduler write sets IOSCHED_SETTINGS, which starts the
// helper whatever udevd read; with no unconverted write of the same
// disks before it, the converted rule is as before.
func TestEarlierUnconvertedScheduler(t *testing.T) {
	const src = `ACTION=="add|change", KERNEL=="sd*", ENV{ID_VENDOR}=="*Google*", ATTR{queue/scheduler}="none"` + "\n"
	const plain = `ACTION=="add|change", KERNEL=="sd*", ENV{ID_VENDOR}=="*Google*", ENV{IOSCHED_SCHEDULER}="none", ENV{IOSCHED_SCHEDULER_SET}="1"` + "\n"
	const rechecked = `ACTION=="add|change", KERNEL=="sd*", ENV{ID_VENDOR}=="*Google*", ENV{IOSCHED_SCHEDULER}="none", ENV{IOSCHED_SCHEDULER_SET}="1", ENV{IOSCHED_SETTINGS}="1"` + "\n"
	tests := []struct {
		name    string
		earlier string // 60-earlier.rules
		fixed   bool   // 60-earlier.rules is converted too
		want    string // 99-gce.rules converted
	}{
		{"unconverted scheduler write before", `ACTION=="add|change", ATTR{queue/rotational}=="1", ATTR{queue/scheduler}="bfq"`, false, rechecked},
		{"converted scheduler write before", `ACTION=="add|change", ATTR{queue/rotational}=="1", ATTR{queue/scheduler}="bfq"`, true, plain},
		{"unconverted write of another attribute before", `ACTION=="add|change", ATTR{queue/read_ahead_kb}="4096"`, false, plain},
		{"unconverted scheduler write of other disks before", `ACTION=="add|change", KERNEL=="nvme*", ATTR{queue/scheduler}="bfq"`, false, plain},
		{"no write before", `ACTION=="add|change", ATTR{queue/scheduler}=="none", GOTO="x"` + "\n" + `LABEL="x"`, false, plain},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		a, b := filepath.Join(dir, "60-earlier.rules"), filepath.Join(dir, "99-gce.rules")
		for p, data := range map[string]string{a: tt.earlier + "\n", b: src} {
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		fix := []string{b}
		if tt.fixed {
			fix = []string{a, b}
		}
		plan, err := PlanFix(FixInput{Read: []string{a, b}, Fix: fix, Target: dir, Sys: dir})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got := ""
		for _, c := range plan {
			if c.Path == b {
				got = strings.TrimPrefix(string(c.Data), convertedHeader)
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
