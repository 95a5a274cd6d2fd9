package rulesaudit

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReaderRejectsAsUdevd: lines udevd's parse_token() (udev-rules.c,
// v252 to v262) rejects whole are no writes, and the spellings it
// resolves to a queue file are. Each case is one rules file; want is
// "LINE:ATTR" of every change-event write. The expectations come from
// reading udev-rules.c and basic/escape.c; the corpus in testdata/udevd
// has a file of each class checked against `udevadm test` of udev 252,
// 257 and 262 (corpus_test.go).
func TestReaderRejectsAsUdevd(t *testing.T) {
	const w = `ATTR{queue/scheduler}="bfq"`
	tests := []struct {
		name, text string
		want       []string
	}{
		{"plain write", `KERNEL=="sd*", ` + w, []string{"1:scheduler"}},
		{"unknown key", `KERNEL=="sd*", FOO=="x", ` + w, nil},
		{"lower-case key", `kernel=="sd*", ` + w, nil},
		{"ACTION= assignment", `ACTION="change", ` + w, nil},
		{"KERNEL= assignment", `KERNEL="sda", ` + w, nil},
		{"ENV{DEVTYPE}= assignment", `ENV{DEVTYPE}="disk", ` + w, nil},
		{"ENV{DEVTYPE}== match", `ENV{DEVTYPE}=="disk", ` + w, []string{"1:scheduler"}},
		{"ENV with no name", `ENV=="x", ` + w, nil},
		{"i prefix on an assignment", `KERNEL=="sd*", ATTR{queue/scheduler}=i"bfq"`, nil},
		{"i prefix on a match", `KERNEL==i"SD*", ` + w, []string{"1:scheduler"}},
		{"i prefix on TEST", `TEST==i"queue", ` + w, nil},
		{"TEST mode not octal", `TEST{0x644}=="queue", ` + w, nil},
		{"TEST mode octal", `TEST{0644}=="queue", ` + w, []string{"1:scheduler"}},
		{"RUN as a match", `RUN=="x", ` + w, nil},
		{"OPTIONS as a match", `OPTIONS=="x", ` + w, nil},
		{"RUN -=", `RUN-="x", ` + w, nil},
		{"LABEL with ==", `LABEL=="x", ` + w, nil},
		{"GOTO with +=", `GOTO+="x", ` + w + "\nLABEL=\"x\"", nil},
		// A GOTO on a dropped line jumps nowhere: the write after it runs.
		{"GOTO on a dropped line", `FOO=="x", GOTO="end"` + "\n" + w + "\n" + `LABEL="end"`, []string{"2:scheduler"}},
		{"GOTO on a kept line", `GOTO="end"` + "\n" + w + "\n" + `LABEL="end"`, nil},
		// A LABEL with == is dropped, so the GOTO to it is ignored.
		{"GOTO to a dropped LABEL", `GOTO="end"` + "\n" + w + "\n" + `LABEL=="end"`, []string{"2:scheduler"}},
		{"./queue path", `KERNEL=="sd*", ATTR{./queue/scheduler}="bfq"`, []string{"1:scheduler"}},
		{"queue/./ path", `KERNEL=="sd*", ATTR{queue/./scheduler}="bfq"`, []string{"1:scheduler"}},
		{"not a queue path", `KERNEL=="sd*", ATTR{queue}="bfq"`, nil},
		{`e-string \s`, `KERNEL=="sd*", ATTR{queue/scheduler}=e"mq-deadline\s"`, []string{"1:scheduler"}},
		{`e-string \u`, `KERNEL=="sd*", ATTR{queue/scheduler}=e"\u0062fq"`, []string{"1:scheduler"}},
		{"no-break space between keys", "KERNEL==\"sd*\",\u00a0" + w, nil},
		{"byte order mark between keys", "KERNEL==\"sd*\", \ufeff" + w, nil},
		{"partitions only", `ENV{DEVTYPE}=="partition", ` + w, nil},
		{"not a disk", `ENV{DEVTYPE}!="disk", ` + w, nil},
		{"disks only", `ENV{DEVTYPE}=="disk", ` + w, []string{"1:scheduler"}},
		{`e-string \u0000`, `KERNEL=="sd*", ATTR{queue/scheduler}=e"\u0000"`, nil},
	}
	for _, tt := range tests {
		rules, err := parseRules(tt.text + "\n")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got []string
		for _, f := range audit("f", rules) {
			got = append(got, fmt.Sprintf("%d:%s", f.Line, f.Attr))
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: %q (-want +got):\n%s", tt.name, tt.text, diff)
		}
	}
}
