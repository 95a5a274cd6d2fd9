package rulesaudit

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// short is a Finding without the replacement text, for compact tables.
type short struct {
	Line    int
	Attr    string
	Value   string
	ViaRUN  bool
	Guard   string
	Freezes string
}

const (
	always    = "freezes the queue on every write on 6.12 and later"
	before618 = "freezes the queue on every write on 6.12 to 6.17"
)

func shorten(found []Finding) []short {
	var got []short
	for _, f := range found {
		got = append(got, short{f.Line, f.Attr, f.Value, f.ViaRUN, f.Guard, FreezeText(f.Freezes)})
	}
	return got
}

func TestAudit(t *testing.T) {
	tests := []struct {
		file string
		want []short
	}{
		{"fedora-style.rules", nil},
		{"rhel-style.rules", nil},
		{"suse-style.rules", []short{{7, "scheduler", "none", false, "", always}, {8, "scheduler", "none", false, "", always},
			{9, "scheduler", "mq-deadline", false, "", always}, {10, "scheduler", "bfq", false, "", always}}},
		{"cachyos-style.rules", []short{{2, "scheduler", "bfq", false, "", always}, {3, "scheduler", "mq-deadline", false, "", always},
			{4, "scheduler", "none", false, "", always}, {5, "nr_requests", "256", false, "", before618}, {5, "wbt_lat_usec", "2000", false, "", always}}},
		{"hand-written.rules", []short{{3, "add_random", "0", false, "", always}, {3, "max_sectors_kb", "4096", false, "", always},
			{3, "nomerges", "2", false, "", before618}, {3, "rotational", "0", false, "", always}, {3, "scheduler", "none", false, "", always},
			{8, "scheduler", "", true, "", always}}},
		{"guarded.rules", nil},
		{"goto.rules", []short{{2, "scheduler", "none", false, "", always}, {8, "rotational", "0", false, "", always},
			{12, "add_random", "0", false, "", always}, {17, "max_sectors_kb", "512", false, "", always}}},
		{"escaped.rules", []short{{2, "scheduler", "bfq", false, "", always}, {3, "wbt_lat_usec", "2000", false, "", always},
			{4, "scheduler", "none", false, "", always}}},
		{"bad-guard.rules", []short{{3, "scheduler", "bfq", false, `ATTR{queue/scheduler}!="bfq"`, always}}},
		{"six-twelve.rules", []short{{3, "nr_requests", "256", false, "", before618}, {3, "read_ahead_kb", "4096", false, "", before618},
			{4, "nomerges", "0", false, "", before618}, {4, "scheduler", "mq-deadline", false, "", always}}},
		{"continuation.rules", []short{{2, "scheduler", "kyber", false, "", always}, {7, "wbt_lat_usec", "0", false, "", always}}},
	}
	for _, tt := range tests {
		found, err := File(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, shorten(found)); diff != "" {
			t.Errorf("File(%s) (-want +got):\n%s", tt.file, diff)
		}
	}
}

func TestReplacement(t *testing.T) {
	tests := []struct {
		file  string
		index int
		want  string
	}{
		{"cachyos-style.rules", 0, `ACTION=="add|change", KERNEL=="sd[a-z]*", ATTR{queue/rotational}=="1", ENV{IOSCHED_SCHEDULER}="bfq", ENV{IOSCHED_SCHEDULER_SET}="1"`},
		// Every queue write of the rule, not just the first.
		{"cachyos-style.rules", 3, `ACTION=="add|change", KERNEL=="sd[a-z]*|nvme[0-9]*", ENV{IOSCHED_ATTR_wbt_lat_usec}="2000", ENV{IOSCHED_ATTR_nr_requests}="256"`},
		// The guard that never held goes: iosched compares first.
		{"bad-guard.rules", 0, `ACTION=="add|change", KERNEL=="sd[a-z]", ATTR{queue/rotational}=="1", ENV{IOSCHED_SCHEDULER}="bfq", ENV{IOSCHED_SCHEDULER_SET}="1"`},
		// An escaped value stays escaped.
		{"escaped.rules", 1, `ACTION=="add|change", KERNEL=="sd*", ENV{IOSCHED_ATTR_wbt_lat_usec}=e"\x32000"`},
		{"goto.rules", 0, `ACTION=="change", ENV{IOSCHED_SCHEDULER}="none", ENV{IOSCHED_SCHEDULER_SET}="1", GOTO="goto_end"`},
	}
	for _, tt := range tests {
		found, err := File(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, found[tt.index].Replace); diff != "" {
			t.Errorf("%s finding %d: replacement (-want +got):\n%s", tt.file, tt.index, diff)
		}
	}
}

func TestFindingText(t *testing.T) {
	found, err := File("testdata/bad-guard.rules")
	if err != nil {
		t.Fatal(err)
	}
	want := `testdata/bad-guard.rules:3: ATTR{queue/scheduler}="bfq" on change events: freezes the queue on every write on 6.12 and later
    the guard ATTR{queue/scheduler}!="bfq" never stops it: queue/scheduler reads the whole list ("mq-deadline [bfq] none"), never the bare name; the glob that works is ATTR{queue/scheduler}!="*[[]bfq[]]*"
    converted in place (` + "`iosched audit --fix`" + ` does it, in a file of the same name in /etc/udev/rules.d), the rule reads:
        ACTION=="add|change", KERNEL=="sd[a-z]", ATTR{queue/rotational}=="1", ENV{IOSCHED_SCHEDULER}="bfq", ENV{IOSCHED_SCHEDULER_SET}="1"`
	if diff := cmp.Diff(want, found[0].String()); diff != "" {
		t.Errorf("finding text (-want +got):\n%s", diff)
	}
}

// TestLineLimits: a physical line of UDEV_LINE_SIZE bytes makes udevd
// skip the whole file; one byte less is read. A rule joined from
// continuations that reaches the limit is dropped on its own.
func TestLineLimits(t *testing.T) {
	write := `ACTION=="change", ATTR{queue/scheduler}="none"`
	pad := func(n int) string { return write + strings.Repeat(" ", n-len(write)) }
	tests := []struct {
		name, text string
		want       []int // lines of findings
		tooLong    bool
	}{
		{"longest line read", pad(maxLine-1) + "\n", []int{1}, false},
		// udev 252 keeps the rules before the long line, 257 skips the file.
		{"line too long", write + "\n" + pad(maxLine) + "\n", []int{1}, true},
		// ... and 252 never resolves the file's GOTOs: they fall through.
		{"line too long after a GOTO", "GOTO=\"x\"\n" + write + "\nLABEL=\"x\"\n" + pad(maxLine) + "\n", []int{2}, true},
		{"continuation too long", pad(maxLine/2) + "\\\n" + strings.Repeat(" ", maxLine/2) + "x\n" + write + "\n", []int{3}, false},
		{"continuation just short", write + strings.Repeat(" ", maxLine/2-len(write)) + "\\\n" + strings.Repeat(" ", maxLine/2-3) + "\n", []int{1}, false},
	}
	for _, tt := range tests {
		p := filepath.Join(t.TempDir(), "x.rules")
		if err := os.WriteFile(p, []byte(tt.text), 0o644); err != nil {
			t.Fatal(err)
		}
		found, err := File(p)
		if got := errors.Is(err, ErrLineTooLong); got != tt.tooLong {
			t.Errorf("%s: error %v, want too long %v", tt.name, err, tt.tooLong)
		}
		var got []int
		for _, f := range found {
			got = append(got, f.Line)
			if f.Udev252 != tt.tooLong {
				t.Errorf("%s: line %d: udev 252 only %v, want %v", tt.name, f.Line, f.Udev252, tt.tooLong)
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: findings (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestList(t *testing.T) {
	etc, run, lib := t.TempDir(), t.TempDir(), t.TempDir()
	mk := func(p, data string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rule := "ACTION==\"add\"\n"
	mk(filepath.Join(etc, "60-a.rules"), rule)
	mk(filepath.Join(lib, "60-a.rules"), rule)
	mk(filepath.Join(lib, "10-b.rules"), rule)
	mk(filepath.Join(lib, "README"), rule)
	mk(filepath.Join(lib, ".hidden.rules"), rule)
	// Masks: a link to /dev/null and an empty file.
	if err := os.Symlink("/dev/null", filepath.Join(etc, "70-masked.rules")); err != nil {
		t.Fatal(err)
	}
	mk(filepath.Join(lib, "70-masked.rules"), rule)
	mk(filepath.Join(run, "80-empty.rules"), "")
	mk(filepath.Join(lib, "80-empty.rules"), rule)
	// Skipped, masking nothing: a dangling link, a directory, a FIFO.
	if err := os.Symlink(filepath.Join(t.TempDir(), "missing"), filepath.Join(etc, "90-dangling.rules")); err != nil {
		t.Fatal(err)
	}
	mk(filepath.Join(lib, "90-dangling.rules"), rule)
	if err := os.Mkdir(filepath.Join(run, "91-dir.rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(run, "92-fifo.rules"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := List([]string{etc, filepath.Join(etc, "missing"), run, lib})
	want := []string{filepath.Join(lib, "10-b.rules"), filepath.Join(etc, "60-a.rules"), filepath.Join(lib, "90-dangling.rules")}
	if diff := cmp.Diff(want, l.Files); diff != "" {
		t.Errorf("List files (-want +got):\n%s", diff)
	}
	var skipped []string
	for _, err := range l.Skipped {
		skipped = append(skipped, err.Error())
	}
	sort.Strings(skipped)
	wantSkipped := []string{
		filepath.Join(etc, "90-dangling.rules") + ": stat " + filepath.Join(etc, "90-dangling.rules") + ": no such file or directory (udevd skips it)",
		filepath.Join(run, "91-dir.rules") + ": not a regular file (udevd skips it)",
		filepath.Join(run, "92-fifo.rules") + ": not a regular file (udevd skips it)",
	}
	sort.Strings(wantSkipped)
	if diff := cmp.Diff(wantSkipped, skipped); diff != "" {
		t.Errorf("List skipped (-want +got):\n%s", diff)
	}
}

func TestParseValue(t *testing.T) {
	tests := []struct {
		in    string
		value string
		fold  bool
		ok    bool
	}{
		{`"bfq"`, "bfq", false, true},
		{`"a\"b"`, `a"b`, false, true},
		{`"a\nb"`, `a\nb`, false, true},
		{`e"a\nb"`, "a\nb", false, true},
		{`e"\x41\101"`, "AA", false, true},
		{`i"BFQ"`, "BFQ", true, true},
		{`ei"a\tb"`, "a\tb", true, true},
		{`ie"x"`, "x", true, true},
		{`ee"x"`, "", false, false},
		{`ii"x"`, "", false, false},
		{`x"x"`, "", false, false},
		{`"open`, "", false, false},
		{`e"\q"`, "", false, false},
	}
	for _, tt := range tests {
		v, _, fold, err := parseValue(tt.in)
		if (err == nil) != tt.ok || v != tt.value || fold != tt.fold {
			t.Errorf("parseValue(%s) = %q, %v, %v; want %q, %v, ok %v", tt.in, v, fold, err, tt.value, tt.fold, tt.ok)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		fold, want bool
	}{
		{"*[[]bfq[]]*", "mq-deadline [bfq] none", false, true},
		{"*[[]bfq[]]*", "mq-deadline bfq none", false, false},
		{"bfq", "mq-deadline [bfq] none", false, false},
		{"add|change", "change", false, true},
		{"|add", "", false, true},
		{"sd[!0-9]*", "sda", false, true},
		{"sd[!0-9]*", "sd1", false, false},
		{"sd[^a]", "sdb", false, true},
		{"a*b", "a/x/b", false, true},
		{"[", "[", false, true},
		{"a\\*", "a*", false, true},
		{"a\\*", "ab", false, false},
		{"?", "", false, false},
		{"CHANGE", "change", true, true},
		{"CHANGE", "change", false, false},
		{"[]a]", "]", false, true},
		{"[a-c]x", "bx", false, true},
	}
	for _, tt := range tests {
		if got := globMatch(tt.pattern, tt.s, tt.fold); got != tt.want {
			t.Errorf("globMatch(%q, %q, %v) = %v, want %v", tt.pattern, tt.s, tt.fold, got, tt.want)
		}
	}
}

// TestAuditAsUdevd: the writes udevd performs, read as it reads rules
// (testdata/wild.rules says which reading each line tests).
func TestAuditAsUdevd(t *testing.T) {
	rules, err := readFile("testdata/wild.rules")
	if err != nil {
		t.Fatal(err)
	}
	type w struct {
		Line         int
		Attr, Device string
		AddOnly      bool
	}
	var got []w
	for _, f := range append(audit("w", rules), addOnly("w", rules)...) {
		got = append(got, w{f.Line, f.Attr, f.Device, f.AddOnly})
	}
	want := []w{
		{6, "scheduler", "", false}, // reached by the first GOTO only
		{8, "read_ahead_kb", "", false},
		{9, "scheduler", "block/sda", false},
		{10, "nomerges", "", false},
		{12, "wbt_lat_usec", "", false}, // after a lone "\r"
		{14, "iostats", "", false},      // after a NUL
		{11, "rotational", "", true},
		{13, "add_random", "", true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("writes of wild.rules (-want +got):\n%s", diff)
	}
}

// TestSplitPhys: line ends as udevd's read_line() takes them.
func TestSplitPhys(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a\nb\n", []string{"a", "b"}},
		{"a\r\nb", []string{"a", "b"}},
		{"a\n\rb", []string{"a", "b"}},
		{"a\r\n\x00b", []string{"a", "b"}},
		{"a\n\nb", []string{"a", "", "b"}},
		{"a\rb\x00c", []string{"a", "b", "c"}},
		{"a\x00\nb", []string{"a", "", "b"}}, // nothing joins a NUL
		{"a\r\rb\n", []string{"a", "", "b"}},
	}
	for _, tt := range tests {
		var got []string
		for _, l := range splitPhys(tt.in) {
			got = append(got, l.text)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("splitPhys(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
