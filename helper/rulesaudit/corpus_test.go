package rulesaudit

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/iosched/iosched/helper/queueattr"
)

// udevadmWrite is one ATTR write `udevadm test` printed: the line of its
// rule, the attribute under queue/ and the value.
type udevadmWrite struct {
	Line  int
	Attr  string
	Value string
}

// readUdevadm reads a corpus file's record (test/host/udevadm.test
// writes it): "VERSION LINE PATH "VALUE"" a write, "VERSION -" for a
// version that wrote nothing. It keeps the writes of freezing queue
// attributes of the event's own device, the writes audit reports.
func readUdevadm(path string) (map[string][]udevadmWrite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read record %s: %w", path, err)
	}
	defer f.Close()
	out := map[string][]udevadmWrite{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if strings.HasPrefix(text, "#") || text == "" {
			continue
		}
		ver, rest, _ := strings.Cut(text, " ")
		if rest == "-" {
			out[ver] = nil
			continue
		}
		lineText, rest, _ := strings.Cut(rest, " ")
		attrPath, value, _ := strings.Cut(rest, " ")
		line, err := strconv.Atoi(lineText)
		if err != nil || len(value) < 2 || value[0] != '"' || value[len(value)-1] != '"' {
			return nil, fmt.Errorf("%s:%d: not VERSION LINE PATH \"VALUE\": %q", path, n, text)
		}
		if _, ok := out[ver]; !ok {
			out[ver] = nil
		}
		attr, dev, ok := queueAttr(attrPath)
		if !ok || dev != "" || queueattr.FreezeRanges(attr) == nil {
			continue
		}
		out[ver] = append(out[ver], udevadmWrite{line, attr, value[1 : len(value)-1]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read record %s: %w", path, err)
	}
	return out, nil
}

// auditAs is what File reports for the rules file at path that udev ver
// performs (252: all but Not252; later: all but Udev252), each write's
// line moved to the line udev ver names it by (udevFirstLine).
func auditAs(path, ver string) ([]udevadmWrite, error) {
	found, err := File(path)
	if err != nil && !errors.Is(err, ErrLineTooLong) {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ends := map[int]int{}
	for _, d := range []dialect{udevCurrent, udev252} {
		rules, _ := parseRulesAs(string(data), d)
		for _, r := range rules {
			ends[r.line] = r.end
		}
	}
	var out []udevadmWrite
	for _, f := range found {
		if f.ViaRUN || ver == "252" && f.Not252 || ver != "252" && f.Udev252 {
			continue
		}
		line := f.Line
		if !udevFirstLine(ver) {
			line = ends[f.Line]
		}
		out = append(out, udevadmWrite{line, f.Attr, f.Value})
	}
	return out, nil
}

// udevFirstLine reports whether udev ver names a continued rule by its
// first line (262) rather than its last (252, 257), as the corpus shows
// (continuation.udevadm).
func udevFirstLine(ver string) bool {
	v, err := strconv.Atoi(ver)
	return err == nil && v >= 262
}

// TestReaderAgreesWithUdevadm: for every corpus file, audit's writes on
// a change event equal the freezing queue writes `udevadm test` of each
// recorded udev version printed for a loop disk with that file alone
// (testdata/udevd/NAME.udevadm, recorded by test/host/udevadm.test), in
// line, attribute and value; the line of a continued rule as that
// version names it.
func TestReaderAgreesWithUdevadm(t *testing.T) {
	files, err := filepath.Glob("testdata/udevd/*.rules")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 60 {
		t.Fatalf("%d corpus files in testdata/udevd, want at least 60", len(files))
	}
	agree := map[string]int{}
	for _, path := range files {
		rec, err := readUdevadm(strings.TrimSuffix(path, ".rules") + ".udevadm")
		if err != nil {
			t.Error(err)
			continue
		}
		for _, ver := range []string{"252", "257", "262"} {
			want, ok := rec[ver]
			if !ok {
				t.Errorf("%s: no record of udev %s", path, ver)
				continue
			}
			got, err := auditAs(path, ver)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				continue
			}
			sortWrites(want)
			sortWrites(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s, udev %s (-udevadm +audit):\n%s", path, ver, diff)
				continue
			}
			agree[ver]++
		}
	}
	t.Logf("%d corpus files; audit agrees with udevadm test on %v", len(files), agree)
}

func sortWrites(w []udevadmWrite) {
	sort.Slice(w, func(i, j int) bool {
		a, b := w[i], w[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Attr != b.Attr {
			return a.Attr < b.Attr
		}
		return a.Value < b.Value
	})
}

// TestUdev252Marks: a write on a line with an i"..." value happens on
// 257 and later only, as udev 252 drops the line; a write behind a GOTO
// on such a line happens on 252 only. The text says which.
func TestUdev252Marks(t *testing.T) {
	tests := []struct {
		file, want string
	}{
		{"testdata/udevd/i-prefix-match.rules", `testdata/udevd/i-prefix-match.rules:2: ATTR{queue/scheduler}="bfq" (udev 257 and later only: udev 252 has no i"..." prefix and drops a line with one) on change events`},
		{"testdata/udevd/goto-i-prefix.rules", `testdata/udevd/goto-i-prefix.rules:3: ATTR{queue/scheduler}="bfq" (udev 252 only: udev 252 drops a line with an i"..." value, which 257 and later read) on change events`},
		{"testdata/udevd/plain-write.rules", `testdata/udevd/plain-write.rules:2: ATTR{queue/scheduler}="bfq" on change events`},
	}
	for _, tt := range tests {
		found, err := File(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range found {
			text, _, _ := strings.Cut(f.Text(false), ": freezes")
			got = append(got, text)
		}
		if diff := cmp.Diff([]string{tt.want}, got); diff != "" {
			t.Errorf("File(%s) (-want +got):\n%s", tt.file, diff)
		}
	}
}
