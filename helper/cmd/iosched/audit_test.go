package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/iosched/iosched/helper/rulesaudit"
)

// fullWriter fails every write, as /dev/full does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// auditResult is what one audit run printed: stdout's lines that start
// a finding or summarise, stderr's lines, the exit status.
type auditResult struct {
	Code   int
	Stdout []string
	Stderr []string
}

// runAudit runs iosched audit with rulesDirs; stdout nil is a buffer.
func runAudit(t *testing.T, dirs []string, stdout io.Writer, args ...string) (auditResult, string) {
	t.Helper()
	var out, errb bytes.Buffer
	if stdout == nil {
		stdout = &out
	}
	e := env{stdout: stdout, stderr: &errb, rulesDirs: dirs}
	code := run(e, append([]string{"audit"}, args...))
	r := auditResult{Code: code}
	for _, l := range strings.Split(out.String(), "\n") {
		if l != "" && !strings.HasPrefix(l, " ") {
			r.Stdout = append(r.Stdout, l)
		}
	}
	for _, l := range strings.Split(errb.String(), "\n") {
		if strings.HasPrefix(l, "iosched: ") {
			r.Stderr = append(r.Stderr, l)
		}
	}
	return r, out.String()
}

func testdata(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("../../rulesaudit/testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAuditExit(t *testing.T) {
	etc, lib := t.TempDir(), t.TempDir()
	copyFile(t, testdata(t, "guarded.rules"), filepath.Join(lib, "60-guarded.rules"))
	copyFile(t, testdata(t, "bad-guard.rules"), filepath.Join(lib, "60-bad-guard.rules"))
	long := filepath.Join(lib, "70-long.rules")
	if err := os.WriteFile(long, []byte(`ACTION=="change", ATTR{queue/scheduler}="none"`+strings.Repeat(" ", 16384)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	clean := t.TempDir()
	copyFile(t, testdata(t, "guarded.rules"), filepath.Join(clean, "60-guarded.rules"))
	if err := os.Mkdir(filepath.Join(clean, "61-dir.rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(etc, "missing.rules")
	fifo := filepath.Join(t.TempDir(), "fifo.rules")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	conflict := t.TempDir()
	copyFile(t, testdata(t, "fedora-style.rules"), filepath.Join(conflict, "60-block-scheduler.rules"))
	copyFile(t, "../../../rules.d/60-iosched.rules", filepath.Join(conflict, "60-iosched.rules"))
	badGuard := filepath.Join(lib, "60-bad-guard.rules")
	found := badGuard + `:3: ATTR{queue/scheduler}="bfq" on change events: freezes the queue on every write on 6.12 and later`
	tests := []struct {
		name string
		dirs []string
		args []string
		want auditResult
	}{
		{"clean files, an add-only write reported", nil, []string{testdata(t, "guarded.rules"), testdata(t, "rhel-style.rules")}, auditResult{Code: 0, Stdout: []string{
			testdata(t, "rhel-style.rules") + `:8: ATTR{queue/scheduler}="$env{elevator}" on add events only: at least twice a boot (the initramfs and coldplug), not on change`,
			"no rule writes a freezing queue attribute on change events (2 file(s) read from " +
				testdata(t, "guarded.rules") + " and " + testdata(t, "rhel-style.rules") + ")"}}},
		{"found", nil, []string{badGuard}, auditResult{Code: 1, Stdout: []string{found,
			"1 write(s) of freezing queue attributes on change events in 1 file(s) read from " + badGuard}}},
		{"missing file, the rest audited", nil, []string{missing, badGuard}, auditResult{Code: 2,
			Stdout: []string{found, "1 write(s) of freezing queue attributes on change events in 1 file(s) read from " + missing + " and " + badGuard},
			Stderr: []string{"iosched: audit: stat " + missing + ": no such file or directory"}}},
		{"system directories: a line too long skips its file", []string{etc, filepath.Join(etc, "none"), lib}, nil, auditResult{Code: 2,
			Stdout: []string{found, "1 write(s) of freezing queue attributes on change events in 2 file(s) read from " + etc + " and " + lib},
			Stderr: []string{"iosched: audit " + long + ": line 1: line too long (16430 bytes, udevd's limit is 16383): udevd 257 and later skip the whole file"}}},
		{"directory named .rules", nil, []string{clean}, auditResult{Code: 2,
			Stdout: []string{"no rule writes a freezing queue attribute on change events (1 file(s) read from " + clean + ")"},
			Stderr: []string{"iosched: " + filepath.Join(clean, "61-dir.rules") + ": not a regular file (udevd skips it)"}}},
		{"a FIFO given by name is not opened", nil, []string{fifo}, auditResult{Code: 2,
			Stdout: []string{"no rule writes a freezing queue attribute on change events (0 file(s) read from " + fifo + ")"},
			Stderr: []string{"iosched: audit " + fifo + ": not a regular file"}}},
		{"no directory", []string{filepath.Join(etc, "none")}, nil, auditResult{Code: 0,
			Stdout: []string{"no rule writes a freezing queue attribute on change events (0 file(s) read from nowhere: no rules directory exists)"}}},
		{"add-only scheduler write against iosched's policy", []string{conflict}, nil, auditResult{Code: 1, Stdout: []string{
			filepath.Join(conflict, "60-block-scheduler.rules") + `:2: ATTR{queue/scheduler}="bfq" on add events only: at least twice a boot (the initramfs and coldplug), not on change`,
			"no rule writes a freezing queue attribute on change events (2 file(s) read from " + conflict + ")",
			"1 add-only scheduler write(s) fight iosched's policy at every boot"}}},
		{"--dry-run alone", nil, []string{"--dry-run"}, auditResult{Code: 2, Stderr: []string{"iosched: audit --dry-run goes with --fix"}}},
		{"--undo with a path", []string{etc}, []string{"--undo", lib}, auditResult{Code: 2, Stderr: []string{"iosched: audit --undo takes no other flag or argument but --forget FILE..."}}},
		{"--forget alone", []string{etc}, []string{"--forget", lib}, auditResult{Code: 2, Stderr: []string{"iosched: audit --forget goes with --undo and one or more files"}}},
	}
	for _, tt := range tests {
		got, _ := runAudit(t, tt.dirs, nil, tt.args...)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: audit %v (-want +got):\n%s", tt.name, tt.args, diff)
		}
	}
}

func TestAuditOutputFails(t *testing.T) {
	for _, file := range []string{"guarded.rules", "bad-guard.rules"} {
		got, _ := runAudit(t, nil, fullWriter{}, testdata(t, file))
		want := auditResult{Code: 1, Stderr: []string{"iosched: audit: write output: no space left on device"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("audit %s >/dev/full (-want +got):\n%s", file, diff)
		}
	}
}

// tree lists the files under dir with their content, links as "-> TARGET".
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if l, err := os.Readlink(p); err == nil {
			m[e.Name()] = "-> " + l
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = string(data)
	}
	return m
}

func TestAuditFixUndo(t *testing.T) {
	etc, lib := t.TempDir(), t.TempDir()
	copyFile(t, testdata(t, "cachyos-style.rules"), filepath.Join(lib, "60-ioschedulers.rules"))
	copyFile(t, testdata(t, "suse-style.rules"), filepath.Join(lib, "60-io-scheduler.rules"))
	copyFile(t, testdata(t, "mixed.rules"), filepath.Join(lib, "50-mixed.rules"))
	// A file of the target directory itself is converted in place.
	tuning := filepath.Join(etc, "70-tuning.rules")
	copyFile(t, testdata(t, "tuning.rules"), tuning)
	dirs := []string{etc, lib}
	before := tree(t, etc)

	// --dry-run writes nothing and shows each file as a diff.
	got, out := runAudit(t, dirs, nil, "--fix", "--dry-run")
	if got.Code != 0 || len(tree(t, etc)) != 1 {
		t.Fatalf("audit --fix --dry-run = %+v, wrote %v", got, tree(t, etc))
	}
	for _, want := range []string{
		"--- " + filepath.Join(lib, "50-mixed.rules") + "\n+++ " + filepath.Join(etc, "50-mixed.rules") + "\n",
		"-ACTION==\"add|change\", KERNEL==\"sd*\", ENV{ID_FAST}=\"1\", ATTR{queue/scheduler}=\"mq-deadline\", ATTR{queue/read_ahead_kb}=\"1024\"\n" +
			"+ACTION==\"add|change\", KERNEL==\"sd*\", ENV{ID_FAST}=\"1\", ENV{IOSCHED_SCHEDULER}=\"mq-deadline\", ENV{IOSCHED_SCHEDULER_SET}=\"1\", ENV{IOSCHED_ATTR_read_ahead_kb}=\"1024\"\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("audit --fix --dry-run: no %q in:\n%s", want, out)
		}
	}

	got, _ = runAudit(t, dirs, nil, "--fix")
	if got.Code != 0 {
		t.Fatalf("audit --fix = %+v", got)
	}
	files := tree(t, etc)
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	wantNames := []string{".iosched-fix.json", "50-mixed.rules", "60-io-scheduler.rules", "60-ioschedulers.rules", "70-tuning.rules"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Fatalf("files written (-want +got):\n%s", diff)
	}
	head := "# Converted in place by `iosched audit --fix`: its ATTR{queue/...} writes are\n" +
		"# now the properties iosched applies, writing only what would change.\n" +
		"# `iosched audit --undo` puts the original back.\n"
	wantConverted := head +
		"# In the style of CachyOS-Settings' ioschedulers and latency rules.\n" +
		`ACTION=="add|change", KERNEL=="sd[a-z]*", ATTR{queue/rotational}=="1", ENV{IOSCHED_SCHEDULER}="bfq", ENV{IOSCHED_SCHEDULER_SET}="1"` + "\n" +
		`ACTION=="add|change", KERNEL=="sd[a-z]*|mmcblk[0-9]*", ATTR{queue/rotational}=="0", ENV{IOSCHED_SCHEDULER}="mq-deadline", ENV{IOSCHED_SCHEDULER_SET}="1"` + "\n" +
		`ACTION=="add|change", KERNEL=="nvme[0-9]*", ATTR{queue/rotational}=="0", ENV{IOSCHED_SCHEDULER}="none", ENV{IOSCHED_SCHEDULER_SET}="1"` + "\n" +
		`ACTION=="add|change", KERNEL=="sd[a-z]*|nvme[0-9]*", ENV{IOSCHED_ATTR_wbt_lat_usec}="2000", ENV{IOSCHED_ATTR_nr_requests}="256"` + "\n"
	if diff := cmp.Diff(wantConverted, files["60-ioschedulers.rules"]); diff != "" {
		t.Errorf("converted file (-want +got):\n%s", diff)
	}
	wantTuning := head + "# Hand-written tuning, kept in /etc/udev/rules.d.\n" +
		`ACTION=="add|change", SUBSYSTEM=="block", KERNEL=="sd*", ENV{IOSCHED_ATTR_read_ahead_kb}="2048", ENV{IOSCHED_ATTR_nr_requests}="128"` + "\n"
	if diff := cmp.Diff(wantTuning, files["70-tuning.rules"]); diff != "" {
		t.Errorf("converted in place (-want +got):\n%s", diff)
	}

	// The system's rules now have no freezing write; a second --fix has nothing to do.
	if got, _ := runAudit(t, dirs, nil); got.Code != 0 {
		t.Errorf("audit after --fix = %+v", got)
	}
	if got, _ := runAudit(t, dirs, nil, "--fix"); got.Code != 0 || len(tree(t, etc)) != len(wantNames) {
		t.Errorf("second audit --fix = %+v", got)
	}

	// --undo keeps a file changed since, and puts the rest back.
	changed := filepath.Join(etc, "50-mixed.rules")
	if err := os.WriteFile(changed, []byte("# mine now\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ = runAudit(t, dirs, nil, "--undo")
	want := auditResult{Code: 1, Stdout: []string{
		"removed " + filepath.Join(etc, "60-io-scheduler.rules"),
		"removed " + filepath.Join(etc, "60-ioschedulers.rules"),
		"restored " + tuning,
		"apply with: udevadm control --reload",
	}, Stderr: []string{"iosched: kept " + changed + ": changed since `iosched audit --fix` wrote it; its original stays recorded in " +
		filepath.Join(etc, rulesaudit.ManifestName) + "; `iosched audit --undo --forget " + changed + "` keeps it as it is and drops the record"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit --undo (-want +got):\n%s", diff)
	}
	// The way out the message names: the edit stays, the record goes.
	got, _ = runAudit(t, dirs, nil, "--undo", "--forget", changed)
	want = auditResult{Code: 0, Stdout: []string{"forgot " + changed + ": kept as it is; --undo no longer puts back what was there before --fix"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit --undo --forget (-want +got):\n%s", diff)
	}
	if got, _ := runAudit(t, dirs, nil, "--undo"); got.Code != 0 || len(got.Stdout) != 1 || got.Stdout[0] != "nothing to undo" {
		t.Errorf("audit --undo after --forget = %+v", got)
	}
	if data, err := os.ReadFile(changed); err != nil || string(data) != "# mine now\n" {
		t.Errorf("after --forget: %q, %v; want the edit", data, err)
	}
	if err := os.Remove(changed); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, tree(t, etc)); diff != "" {
		t.Errorf("after --undo (-want +got):\n%s", diff)
	}
	if got, _ := runAudit(t, dirs, nil); got.Code != 1 {
		t.Errorf("audit after --undo = %+v, want the old findings back", got)
	}
	if got, _ := runAudit(t, dirs, nil, "--undo"); got.Code != 0 || len(got.Stdout) != 1 || got.Stdout[0] != "nothing to undo" {
		t.Errorf("third audit --undo = %+v", got)
	}
}

// TestAuditFixDryRunExits: --fix --dry-run exits as --fix would when a
// file to convert is one an earlier --fix wrote and the user changed.
func TestAuditFixDryRunExits(t *testing.T) {
	etc := t.TempDir()
	tuning := filepath.Join(etc, "70-tuning.rules")
	copyFile(t, testdata(t, "tuning.rules"), tuning)
	if got, _ := runAudit(t, []string{etc}, nil, "--fix"); got.Code != 0 {
		t.Fatalf("audit --fix = %+v", got)
	}
	if err := os.WriteFile(tuning, []byte(`KERNEL=="sd*", ATTR{queue/read_ahead_kb}="64"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := tree(t, etc)
	fix, _ := runAudit(t, []string{etc}, nil, "--fix")
	dry, _ := runAudit(t, []string{etc}, nil, "--fix", "--dry-run")
	if fix.Code != 2 || dry.Code != fix.Code {
		t.Errorf("audit --fix = %+v\naudit --fix --dry-run = %+v\nwant both 2", fix, dry)
	}
	if diff := cmp.Diff(before, tree(t, etc)); diff != "" {
		t.Errorf("a refused --fix changed files (-want +got):\n%s", diff)
	}
}

// TestAuditFixAllRefusals: every refusal of the system in one run,
// each refused file left as it was, the others converted.
func TestAuditFixAllRefusals(t *testing.T) {
	etc, lib := t.TempDir(), t.TempDir()
	refused := []string{"refuse-run.rules", "refuse-unknown.rules", "refuse-state.rules", "refuse-value.rules", "refuse-program.rules"}
	for i, f := range refused {
		copyFile(t, testdata(t, f), filepath.Join(lib, fmt.Sprintf("6%d-x.rules", i)))
	}
	copyFile(t, testdata(t, "tuning.rules"), filepath.Join(lib, "50-tuning.rules"))
	libBefore := tree(t, lib)
	got, _ := runAudit(t, []string{etc, lib}, nil, "--fix")
	named := map[string]bool{}
	for _, l := range got.Stderr {
		for i := range refused {
			if strings.HasPrefix(l, "iosched: "+filepath.Join(lib, fmt.Sprintf("6%d-x.rules", i))+":") {
				named[refused[i]] = true
			}
		}
	}
	if got.Code != 3 || len(named) != len(refused) {
		t.Errorf("audit --fix = %+v\nwant exit 3 and each of %v refused", got, refused)
	}
	files := tree(t, etc)
	if _, ok := files["50-tuning.rules"]; !ok || len(files) != 2 {
		t.Errorf("audit --fix wrote %v, want 50-tuning.rules and the journal", files)
	}
	if diff := cmp.Diff(libBefore, tree(t, lib)); diff != "" {
		t.Errorf("the refused files changed (-want +got):\n%s", diff)
	}
}

// TestAuditStale: audit tells when the vendor file a converted copy in
// /etc masks changed or went since --fix, and what to do.
func TestAuditStale(t *testing.T) {
	etc, lib := t.TempDir(), t.TempDir()
	vendor := filepath.Join(lib, "60-ioschedulers.rules")
	copyFile(t, testdata(t, "cachyos-style.rules"), vendor)
	dirs := []string{etc, lib}
	if got, _ := runAudit(t, dirs, nil, "--fix"); got.Code != 0 {
		t.Fatalf("audit --fix = %+v", got)
	}
	if got, _ := runAudit(t, dirs, nil); got.Code != 0 {
		t.Fatalf("audit after --fix = %+v", got)
	}
	copy := filepath.Join(etc, "60-ioschedulers.rules")
	f, err := os.OpenFile(vendor, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("# updated\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, _ := runAudit(t, dirs, nil)
	want := copy + ": converted from " + vendor + ", which changed since (a package update?): udevd reads the converted copy in its place, so the change is ignored; " +
		"`iosched audit --undo` then `iosched audit --fix` converts the new version (or, to keep the copy, `iosched audit --undo --forget " + copy + "`)"
	if got.Code != 1 || !slices.Contains(got.Stdout, want) {
		t.Errorf("audit after the vendor file changed = %+v\nwant exit 1 and %q", got, want)
	}
	if err := os.Remove(vendor); err != nil {
		t.Fatal(err)
	}
	got, _ = runAudit(t, dirs, nil)
	if got.Code != 1 || len(got.Stdout) == 0 || !strings.Contains(strings.Join(got.Stdout, "\n"), vendor+", which is gone since") {
		t.Errorf("audit after the vendor file went = %+v", got)
	}
}

// TestAuditFixAfterRun: a file sorting after the run rule starts iosched
// in its converted rules, since the run rule decided before them.
func TestAuditFixAfterRun(t *testing.T) {
	etc, lib := t.TempDir(), t.TempDir()
	copyFile(t, testdata(t, "bad-guard.rules"), filepath.Join(lib, "99-zz.rules"))
	if got, _ := runAudit(t, []string{etc, lib}, nil, "--fix"); got.Code != 0 {
		t.Fatalf("audit --fix = %+v", got)
	}
	got := tree(t, etc)["99-zz.rules"]
	want := `ATTR{queue/rotational}=="1", ENV{IOSCHED_SCHEDULER}="bfq", ENV{IOSCHED_SCHEDULER_SET}="1", ENV{IOSCHED_LATE}="1"` + "\n"
	if !strings.Contains(got, want) || strings.Contains(got, `ATTR{queue/scheduler}!="bfq"`) {
		t.Errorf("converted 99-zz.rules:\n%s\nwant %q in it, its never-stopping guard gone", got, want)
	}
	// One run however many rules converted: udevd runs every RUN+=.
	run := `ENV{IOSCHED_LATE}=="1", ENV{IOSCHED_LATE_RUN}!="1", ENV{IOSCHED_LATE_RUN}="1", RUN+="iosched-udev"` + "\n"
	if !strings.HasSuffix(got, run) || strings.Count(got, "RUN+=") != 1 {
		t.Errorf("converted 99-zz.rules:\n%s\nwant one RUN+=, in its last line %q", got, run)
	}
}

func TestAuditFixRefuses(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"refuse-run.rules", ":2: not converted: a RUN program writes queue/scheduler: only an ATTR{} write can be converted"},
		{"refuse-unknown.rules", ":2: not converted: iosched does not know queue/not_an_attribute, so no property can carry it"},
		{"refuse-reads.rules", `:3: not converted: SRC:4: ATTR{queue/scheduler}=="*[[]bfq[]]*" reads queue/scheduler, which this rule writes: converted, iosched would write it only after all rules ran`},
		{"refuse-state.rules", ":2: not converted: a condition on the current queue/rotational other than a compare-first guard: the rule depends on the value it changes"},
		{"refuse-value.rules", `:2: not converted: iosched would reject ATTR{queue/wbt_lat_usec}="fast": `},
		{"refuse-program.rules", `:2: not converted: PROGRAM="/bin/cat /sys/block/%k/queue/scheduler" reads queue/scheduler, which the same rule writes`},
		{"hand-written.rules", ":8: not converted: a RUN program writes queue/scheduler"},
	}
	for _, tt := range tests {
		etc, lib := t.TempDir(), t.TempDir()
		src := filepath.Join(lib, "60-x.rules")
		copyFile(t, testdata(t, tt.file), src)
		copyFile(t, testdata(t, "tuning.rules"), filepath.Join(lib, "50-tuning.rules"))
		tt.want = strings.ReplaceAll(tt.want, "SRC", src)
		// Alone, it is refused and nothing is written; beside a file
		// that converts, that one is, and the exit status says partly.
		got, _ := runAudit(t, []string{etc, lib}, nil, "--fix", src)
		if got.Code != 2 || len(got.Stderr) < 2 || !strings.HasPrefix(got.Stderr[0], "iosched: "+src+tt.want) ||
			got.Stderr[len(got.Stderr)-1] != "iosched: audit --fix: nothing written" {
			t.Errorf("audit --fix %s = %+v, want exit 2 and %q", tt.file, got, src+tt.want)
		}
		if files := tree(t, etc); len(files) != 0 {
			t.Errorf("audit --fix %s wrote %v", tt.file, files)
		}
		got, _ = runAudit(t, []string{etc, lib}, nil, "--fix")
		if got.Code != 3 || len(got.Stderr) < 2 || !strings.HasPrefix(got.Stderr[0], "iosched: "+src+tt.want) ||
			got.Stderr[len(got.Stderr)-1] != "iosched: audit --fix: partly converted: converted 1 file(s); 1 file(s) refused above, left as they were" {
			t.Errorf("audit --fix of %s beside a convertible file = %+v, want exit 3 and %q", tt.file, got, src+tt.want)
		}
		files := tree(t, etc)
		if _, ok := files["50-tuning.rules"]; !ok || len(files) != 2 {
			t.Errorf("audit --fix of %s beside 50-tuning.rules wrote %v, want 50-tuning.rules and the journal", tt.file, files)
		}
	}
	// A file that /etc overrides, and one outside udev's directories:
	// audited, never fixed, and --fix exits 2; so does a missing path.
	etc, lib := t.TempDir(), t.TempDir()
	copyFile(t, testdata(t, "cachyos-style.rules"), filepath.Join(lib, "60-ioschedulers.rules"))
	copyFile(t, testdata(t, "guarded.rules"), filepath.Join(etc, "60-ioschedulers.rules"))
	elsewhere := filepath.Join(t.TempDir(), "60-persistent-storage.rules")
	copyFile(t, testdata(t, "cachyos-style.rules"), elsewhere)
	missing := filepath.Join(lib, "missing.rules")
	for _, dry := range [][]string{nil, {"--dry-run"}} {
		args := append(append([]string{"--fix"}, dry...), filepath.Join(lib, "60-ioschedulers.rules"), elsewhere, missing)
		got, _ := runAudit(t, []string{etc, lib}, nil, args...)
		want := auditResult{Code: 2, Stdout: []string{"nothing to fix: no rule writes a freezing queue attribute on change events"}, Stderr: []string{
			"iosched: audit: stat " + missing + ": no such file or directory",
			"iosched: " + filepath.Join(lib, "60-ioschedulers.rules") + ": audited, not fixed: udevd reads " + filepath.Join(etc, "60-ioschedulers.rules") + " in its place",
			"iosched: " + elsewhere + ": audited, not fixed: it is not in udev's rules directories (" + etc + ", " + lib + ")",
		}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("audit %v (-want +got):\n%s", args, diff)
		}
		if files := tree(t, etc); len(files) != 1 {
			t.Errorf("audit %v wrote %v", args, files)
		}
	}
	// An add-only write after a converted one would now come first.
	etc, lib = t.TempDir(), t.TempDir()
	copyFile(t, testdata(t, "cachyos-style.rules"), filepath.Join(lib, "60-ioschedulers.rules"))
	copyFile(t, testdata(t, "fedora-style.rules"), filepath.Join(lib, "61-block-scheduler.rules"))
	got, _ := runAudit(t, []string{etc, lib}, nil, "--fix")
	if got.Code != 2 || len(got.Stderr) < 2 || !strings.Contains(got.Stderr[0], filepath.Join(lib, "61-block-scheduler.rules")+":2 writes queue/scheduler after it and is not converted") {
		t.Errorf("audit --fix before an add-only write = %+v", got)
	}
	if files := tree(t, etc); len(files) != 0 {
		t.Errorf("audit --fix before an add-only write wrote %v", files)
	}
}

// TestAuditOtherWriters: auditing the system also lists the writers
// outside udev's rules, and counts them as findings.
func TestAuditOtherWriters(t *testing.T) {
	root := t.TempDir()
	etc := filepath.Join(root, "etc", "udev", "rules.d")
	if err := os.MkdirAll(filepath.Join(root, "etc", "tmpfiles.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "tmpfiles.d", "s.conf"), []byte("w /sys/block/sda/queue/scheduler - - - - bfq\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run(env{stdout: &out, stderr: &errb, rulesDirs: []string{etc}, root: root}, []string{"audit"})
	want := "/etc/tmpfiles.d/s.conf:1: systemd-tmpfiles writes queue/scheduler=\"bfq\" on sda at boot, without comparing first\n" +
		"    remove the line and set ENV{IOSCHED_SCHEDULER}=\"bfq\" in a udev rule for the disk: iosched writes only what would change\n" +
		"no rule writes a freezing queue attribute on change events (0 file(s) read from nowhere: no rules directory exists)\n" +
		"1 write(s) of queue attributes at boot outside udev's rules, none comparing first\n"
	if diff := cmp.Diff(want, out.String()); diff != "" || code != 1 {
		t.Errorf("audit exit %d, stderr %q, stdout (-want +got):\n%s", code, errb.String(), diff)
	}
}

// TestAuditFixRefusedOnce: when --fix refuses every file, each refusal
// is printed once, then that nothing was written.
func TestAuditFixRefusedOnce(t *testing.T) {
	etc, lib := t.TempDir(), t.TempDir()
	copyFile(t, testdata(t, "refuse-run.rules"), filepath.Join(lib, "60-x.rules"))
	got, _ := runAudit(t, []string{etc, lib}, nil, "--fix")
	want := auditResult{Code: 2, Stderr: []string{
		"iosched: " + filepath.Join(lib, "60-x.rules") + ":2: not converted: a RUN program writes queue/scheduler: only an ATTR{} write can be converted",
		"iosched: audit --fix: nothing written",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit --fix of a refused file (-want +got):\n%s", diff)
	}
}
