package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
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
	badGuard := filepath.Join(lib, "60-bad-guard.rules")
	found := badGuard + `:3: ATTR{queue/scheduler}="bfq" on change events: freezes the queue on every write on 6.12 and later`
	tests := []struct {
		name string
		dirs []string
		args []string
		want auditResult
	}{
		{"clean files", nil, []string{testdata(t, "guarded.rules"), testdata(t, "rhel-style.rules")}, auditResult{Code: 0, Stdout: []string{
			"no rule writes a freezing queue attribute on change events (2 file(s) read from " +
				testdata(t, "guarded.rules") + " and " + testdata(t, "rhel-style.rules") + ")"}}},
		{"found", nil, []string{badGuard}, auditResult{Code: 1, Stdout: []string{found,
			"1 write(s) of freezing queue attributes on change events in 1 file(s) read from " + badGuard}}},
		{"missing file, the rest audited", nil, []string{missing, badGuard}, auditResult{Code: 2,
			Stdout: []string{found, "1 write(s) of freezing queue attributes on change events in 1 file(s) read from " + missing + " and " + badGuard},
			Stderr: []string{"iosched: audit: stat " + missing + ": no such file or directory"}}},
		{"system directories: a line too long skips its file", []string{etc, filepath.Join(etc, "none"), lib}, nil, auditResult{Code: 2,
			Stdout: []string{found, "1 write(s) of freezing queue attributes on change events in 2 file(s) read from " + etc + " and " + lib},
			Stderr: []string{"iosched: audit " + long + ": line 1: line too long (16430 bytes, udevd's limit is 16383): udevd skips the whole file"}}},
		{"directory named .rules", nil, []string{clean}, auditResult{Code: 2,
			Stdout: []string{"no rule writes a freezing queue attribute on change events (1 file(s) read from " + clean + ")"},
			Stderr: []string{"iosched: " + filepath.Join(clean, "61-dir.rules") + ": not a regular file (udevd skips it)"}}},
		{"a FIFO given by name is not opened", nil, []string{fifo}, auditResult{Code: 2,
			Stdout: []string{"no rule writes a freezing queue attribute on change events (0 file(s) read from " + fifo + ")"},
			Stderr: []string{"iosched: audit " + fifo + ": not a regular file"}}},
		{"no directory", []string{filepath.Join(etc, "none")}, nil, auditResult{Code: 0,
			Stdout: []string{"no rule writes a freezing queue attribute on change events (0 file(s) read from nowhere: no rules directory exists)"}}},
		{"--dry-run alone", nil, []string{"--dry-run"}, auditResult{Code: 2, Stderr: []string{"iosched: audit --dry-run goes with --fix"}}},
		{"--undo with a path", []string{etc}, []string{"--undo", lib}, auditResult{Code: 2, Stderr: []string{"iosched: audit --undo takes no other flag or argument"}}},
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
	copyFile(t, testdata(t, "fedora-style.rules"), filepath.Join(lib, "60-block-scheduler.rules"))
	// A file of the target directory itself is rewritten in place.
	tuning := filepath.Join(etc, "70-tuning.rules")
	copyFile(t, testdata(t, "tuning.rules"), tuning)
	dirs := []string{etc, lib}

	// --dry-run writes nothing and shows each file as a diff.
	got, out := runAudit(t, dirs, nil, "--fix", "--dry-run")
	if got.Code != 0 || len(tree(t, etc)) != 1 {
		t.Fatalf("audit --fix --dry-run = %+v, wrote %v", got, tree(t, etc))
	}
	for _, want := range []string{
		"--- /dev/null\n+++ " + filepath.Join(etc, "61-iosched-migrated-60-ioschedulers.rules") + "\n",
		"--- " + filepath.Join(lib, "50-mixed.rules") + "\n+++ " + filepath.Join(etc, "50-mixed.rules") + "\n",
		"-ACTION==\"add|change\", KERNEL==\"sd*\", ENV{ID_FAST}=\"1\", ATTR{queue/scheduler}=\"mq-deadline\", ATTR{queue/read_ahead_kb}=\"1024\"\n" +
			"+# line 3: queue writes moved to 61-iosched-migrated-50-mixed.rules\n" +
			"+ACTION==\"add|change\", KERNEL==\"sd*\", ENV{ID_FAST}=\"1\"\n",
		filepath.Join(etc, "60-io-scheduler.rules") + " -> /dev/null (masks " + filepath.Join(lib, "60-io-scheduler.rules") + ": nothing else is left in it)\n",
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
	wantNames := []string{".iosched-fix.json", "50-mixed.rules", "60-io-scheduler.rules", "60-ioschedulers.rules",
		"61-iosched-migrated-50-mixed.rules", "61-iosched-migrated-60-io-scheduler.rules", "61-iosched-migrated-60-ioschedulers.rules",
		"61-iosched-migrated-70-tuning.rules", "70-tuning.rules"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Fatalf("files written (-want +got):\n%s", diff)
	}
	src := filepath.Join(lib, "60-ioschedulers.rules")
	wantMigrated := "# Written by `iosched audit --fix` from " + src + ": its queue writes as the\n" +
		"# properties 60-iosched.rules and 99-iosched-run.rules act on (iosched writes\n" +
		"# only what would change), with the GOTO and LABEL lines they depend on.\n" +
		"# `iosched audit --undo` removes this file.\n" +
		"# " + src + ":2\n" +
		`ACTION=="add|change", KERNEL=="sd[a-z]*", ATTR{queue/rotational}=="1", ENV{IOSCHED_SCHEDULER}="bfq"` + "\n" +
		"# " + src + ":3\n" +
		`ACTION=="add|change", KERNEL=="sd[a-z]*|mmcblk[0-9]*", ATTR{queue/rotational}=="0", ENV{IOSCHED_SCHEDULER}="mq-deadline"` + "\n" +
		"# " + src + ":4\n" +
		`ACTION=="add|change", KERNEL=="nvme[0-9]*", ATTR{queue/rotational}=="0", ENV{IOSCHED_SCHEDULER}="none"` + "\n" +
		"# " + src + ":5\n" +
		`ACTION=="add|change", KERNEL=="sd[a-z]*|nvme[0-9]*", ENV{IOSCHED_ATTR_wbt_lat_usec}="2000", ENV{IOSCHED_ATTR_nr_requests}="256"` + "\n"
	if diff := cmp.Diff(wantMigrated, files["61-iosched-migrated-60-ioschedulers.rules"]); diff != "" {
		t.Errorf("migrated file (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("-> /dev/null", files["60-ioschedulers.rules"]); diff != "" {
		t.Errorf("mask (-want +got):\n%s", diff)
	}
	wantTuning := "# Written by `iosched audit --fix`: the freezing queue writes of this file\n" +
		"# moved to " + filepath.Join(etc, "61-iosched-migrated-70-tuning.rules") + " as properties.\n" +
		"# `iosched audit --undo` takes this back.\n" +
		"# Hand-written tuning, kept in /etc/udev/rules.d.\n" +
		"# line 2: queue writes moved to 61-iosched-migrated-70-tuning.rules\n"
	if diff := cmp.Diff(wantTuning, files["70-tuning.rules"]); diff != "" {
		t.Errorf("rewritten in place (-want +got):\n%s", diff)
	}

	// udev's order: every migrated file between the two iosched files.
	order := append([]string{rulesaudit.PolicyRules, rulesaudit.RunRules}, names...)
	sort.Strings(order)
	pos := map[string]int{}
	for i, n := range order {
		pos[n] = i
	}
	for _, n := range names {
		if strings.HasPrefix(n, rulesaudit.MigratedPrefix) && !(pos[rulesaudit.PolicyRules] < pos[n] && pos[n] < pos[rulesaudit.RunRules]) {
			t.Errorf("%s does not sort between %s and %s", n, rulesaudit.PolicyRules, rulesaudit.RunRules)
		}
	}

	// The system's rules now have no freezing write; a second --fix has nothing to do.
	if got, _ := runAudit(t, dirs, nil); got.Code != 0 {
		t.Errorf("audit after --fix = %+v", got)
	}
	if got, _ := runAudit(t, dirs, nil, "--fix"); got.Code != 0 || len(tree(t, etc)) != len(wantNames) {
		t.Errorf("second audit --fix = %+v", got)
	}

	// --undo leaves a file changed since, and removes the rest.
	changed := filepath.Join(etc, "61-iosched-migrated-50-mixed.rules")
	if err := os.WriteFile(changed, []byte("# mine now\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ = runAudit(t, dirs, nil, "--undo")
	want := auditResult{Code: 1, Stdout: []string{
		"removed " + filepath.Join(etc, "50-mixed.rules"),
		"removed " + filepath.Join(etc, "60-io-scheduler.rules"),
		"removed " + filepath.Join(etc, "60-ioschedulers.rules"),
		"removed " + filepath.Join(etc, "61-iosched-migrated-60-io-scheduler.rules"),
		"removed " + filepath.Join(etc, "61-iosched-migrated-60-ioschedulers.rules"),
		"removed " + filepath.Join(etc, "61-iosched-migrated-70-tuning.rules"),
		"restored " + tuning,
		"apply with: udevadm control --reload",
	}, Stderr: []string{"iosched: " + changed + ": changed since `iosched audit --fix` wrote it: left in place"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit --undo (-want +got):\n%s", diff)
	}
	if err := os.Remove(changed); err != nil {
		t.Fatal(err)
	}
	got, _ = runAudit(t, dirs, nil, "--undo")
	want = auditResult{Code: 0, Stdout: []string{changed + ": already gone"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("second audit --undo (-want +got):\n%s", diff)
	}
	original, err := os.ReadFile(testdata(t, "tuning.rules"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"70-tuning.rules": string(original)}, tree(t, etc)); diff != "" {
		t.Errorf("after --undo (-want +got):\n%s", diff)
	}
	if got, _ := runAudit(t, dirs, nil); got.Code != 1 {
		t.Errorf("audit after --undo = %+v, want the old findings back", got)
	}
	if got, _ := runAudit(t, dirs, nil, "--undo"); got.Code != 0 || len(got.Stdout) != 1 || got.Stdout[0] != "nothing to undo" {
		t.Errorf("third audit --undo = %+v", got)
	}
}

func TestAuditFixRefuses(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"refuse-run.rules", ":2: not converted: a RUN program writes queue/scheduler: only an ATTR{} write can be converted"},
		{"refuse-unknown.rules", ":2: not converted: iosched does not know queue/not_an_attribute, so no property can carry it"},
		{"refuse-reads.rules", `:4: not converted: ATTR{queue/scheduler}=="*[[]bfq[]]*" reads queue/scheduler, which line 3 writes: once converted, iosched writes it only after all rules ran`},
		{"refuse-state.rules", ":2: not converted: a condition on the current queue/rotational other than a compare-first guard: the rule depends on the value it changes"},
		{"refuse-value.rules", `:2: not converted: iosched would reject ATTR{queue/wbt_lat_usec}="fast": `},
		{"refuse-program.rules", `:2: not converted: PROGRAM="/bin/cat /sys/block/%k/queue/scheduler" reads queue/scheduler, which the same rule writes`},
		{"hand-written.rules", ":8: not converted: a RUN program writes queue/scheduler"},
	}
	for _, tt := range tests {
		etc, lib := t.TempDir(), t.TempDir()
		src := filepath.Join(lib, "60-x.rules")
		copyFile(t, testdata(t, tt.file), src)
		copyFile(t, testdata(t, "cachyos-style.rules"), filepath.Join(lib, "60-ioschedulers.rules"))
		got, _ := runAudit(t, []string{etc, lib}, nil, "--fix")
		if got.Code != 2 || len(got.Stderr) != 2 || !strings.HasPrefix(got.Stderr[0], "iosched: "+src+tt.want) ||
			got.Stderr[1] != "iosched: audit --fix: nothing written" {
			t.Errorf("audit --fix of %s = %+v, want exit 2 and %q", tt.file, got, src+tt.want)
		}
		if files := tree(t, etc); len(files) != 0 {
			t.Errorf("audit --fix of %s wrote %v", tt.file, files)
		}
	}
	// A file that /etc overrides: udevd does not read it.
	etc, lib := t.TempDir(), t.TempDir()
	copyFile(t, testdata(t, "cachyos-style.rules"), filepath.Join(lib, "60-ioschedulers.rules"))
	copyFile(t, testdata(t, "guarded.rules"), filepath.Join(etc, "60-ioschedulers.rules"))
	got, _ := runAudit(t, []string{etc, lib}, nil, "--fix", filepath.Join(lib, "60-ioschedulers.rules"))
	want := auditResult{Code: 2, Stderr: []string{
		"iosched: " + filepath.Join(lib, "60-ioschedulers.rules") + ": not converted: " + filepath.Join(etc, "60-ioschedulers.rules") + " overrides it already, so udevd does not read it",
		"iosched: audit --fix: nothing written",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit --fix of files it leaves alone (-want +got):\n%s", diff)
	}
}
