package rulesaudit

import (
	"errors"
	"path"
	"slices"
	"strings"
	"testing"
)

// FuzzAudit: any rules text is audited without a panic, every finding
// points at a line of the text, and every replacement is a rule udevd can
// parse with no ATTR{queue/...} write left of an attribute iosched knows.
func FuzzAudit(f *testing.F) {
	for _, s := range []string{
		`ACTION=="add|change", ATTR{queue/scheduler}="bfq"`,
		"KERNEL==\"sd*\", \\\n# c\n  ATTR{queue/rotational}=\"0\", GOTO=\"x\"\nLABEL=\"x\"",
		`ATTR{queue/scheduler}!="bfq", ATTR{queue/scheduler}=e"b\x66q"`,
		`ACTION==i"CHANGE", ATTR{queue/read_ahead_kb}:="4096", RUN+="/bin/sh -c 'echo 1 > /sys/block/%k/queue/iostats'"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		rules, err := readRules(strings.NewReader(text))
		if err != nil {
			return
		}
		lines := len(splitPhys(text)) + 1
		for _, fd := range audit("f", rules) {
			if fd.Line < 1 || fd.Line > lines {
				t.Fatalf("finding at line %d of a %d-line text", fd.Line, lines)
			}
			if fd.ViaRUN {
				continue
			}
			keys, err := parseRule(fd.Replace)
			if err != nil {
				t.Fatalf("replacement %q does not parse: %v", fd.Replace, err)
			}
			for _, k := range keys {
				if attr, ok := queueWrite(k); ok && known(attr) {
					t.Fatalf("replacement %q still writes queue/%s", fd.Replace, attr)
				}
			}
		}
	})
}

// FuzzGlobMatch compares fnmatch with path.Match where the two agree on
// meaning: a pattern path.Match accepts, ASCII only (fnmatch here works
// on bytes, as in the C locale; path.Match on UTF-8 runes), no '/'.
func FuzzGlobMatch(f *testing.F) {
	for _, s := range [][2]string{{"*[[]bfq[]]*", "mq-deadline [bfq] none"}, {"sd[!0-9]*", "sda"}, {"a\\*?", "a*b"}, {"[a-c]", "b"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		got := fnmatch(pattern, name)
		if strings.ContainsAny(name, "/") || strings.ContainsAny(pattern, "/|]") || !ascii(pattern+name) {
			return
		}
		want, err := path.Match(pattern, name)
		if err != nil {
			return
		}
		if got != want {
			t.Fatalf("fnmatch(%q, %q) = %v, path.Match says %v", pattern, name, got, want)
		}
	})
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// FuzzConvert: for any rules text that --fix would convert, the
// converted text keeps every line (three comment lines added on top),
// reads back with the same rules in the same order, each with the same
// keys but the queue writes (now properties) and their compare-first
// guards, and no change event reaches a queue write iosched knows.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		"SUBSYSTEM!=\"block\", GOTO=\"e\"\nACTION==\"add|change\", ENV{X}=\"1\", ATTR{queue/scheduler}=\"bfq\", GOTO=\"e\"\nLABEL=\"e\"\n",
		"KERNEL==\"sd*\", \\\n  ATTR{queue/read_ahead_kb}=\"4096\"\n# c\n",
		"ATTR{queue/scheduler}!=\"bfq\", ATTR{queue/scheduler}=e\"bfq\"",
		"ATTR{queue//scheduler}+=\"noop\"\r\nATTR{queue/iosched/fifo_batch}=\"8\"\x00ATTR{queue/nomerges}=\"1\"",
		"PROGRAM==\"/bin/x\", RESULT==\"1\", ATTR{queue/rotational}=\"0\", ATTR{queue/rotational}!=\"0\"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		afterRun := len(text)%2 == 1 // both placements, with the corpus of one string
		rules, err := parseRules(text)
		if err != nil {
			return
		}
		p := &parsed{path: "src", data: []byte(text), rules: rules, conv: map[int]bool{}}
		for _, fd := range audit("src", rules) {
			if fd.ViaRUN || fd.Device != "" {
				return
			}
			p.conv[fd.Line] = true
		}
		if len(p.conv) == 0 || crossCheck([]*parsed{p}) != nil {
			return
		}
		out, _, err := convert(p, afterRun, t.TempDir())
		if err != nil {
			var r Refusal
			if errors.As(err, &r) {
				return
			}
			t.Fatalf("convert: %v\n%q", err, text)
		}
		header := 3
		if !strings.HasPrefix(string(out), convertedHeader) {
			header = 0
		}
		added := 0 // the line that starts iosched after the file's rules
		if strings.HasSuffix(string(out), lateRunLine) {
			added = 1
			if !afterRun || strings.Count(string(out), "RUN+=\""+runProgram) != strings.Count(text, "RUN+=\""+runProgram)+1 {
				t.Fatalf("the run line in a file that does not sort after the run rule, or more than one:\n%q", out)
			}
		}
		body := strings.TrimSuffix(string(out), lateRunLine)
		phys := splitPhys(body)
		if got, want := len(phys), len(splitPhys(text))+header; got != want {
			t.Fatalf("converted text has %d lines before the run line, want %d:\n%q", got, want, out)
		}
		got, err := parseRules(string(out))
		if err == nil {
			got = got[:len(got)-added]
		}
		if err != nil {
			t.Fatalf("converted text does not read back (%v):\n%q", err, out)
		}
		// Each rule stays on its line; a converted rule of which
		// nothing is kept is a comment there.
		at := map[int]rule{}
		for _, r := range got {
			at[r.line-header] = r
		}
		for i, r := range rules {
			g, ok := at[r.line]
			if !ok {
				if !p.conv[r.line] || !strings.HasPrefix(strings.TrimLeft(phys[r.line-1+header].text, " \t"), droppedComment) {
					t.Fatalf("rule %d (line %d) is gone:\n%q", i, r.line, out)
				}
				continue
			}
			if want, have := keptKeys(r, p.conv[r.line]), keptKeys(g, p.conv[r.line]); !slices.Equal(want, have) {
				t.Fatalf("rule %d: keys %q became %q", i, want, have)
			}
		}
		if len(got) > len(rules) {
			t.Fatalf("converted text reads back as %d rules, want at most %d:\n%q", len(got), len(rules), out)
		}
		for _, fd := range audit("out", got) {
			if known(fd.Attr) && !fd.ViaRUN {
				t.Fatalf("converted text still writes queue/%s on change:\n%q", fd.Attr, out)
			}
		}
	})
}

// keptKeys is a rule's keys as written, without what conversion changes
// in a converted rule: queue writes, guards on them and iosched's
// properties.
func keptKeys(r rule, converted bool) []string {
	written := map[string]string{}
	for _, k := range r.keys {
		if attr, ok := queueWrite(k); ok {
			written[attr] = k.value
		}
	}
	var out []string
	for _, k := range r.keys {
		if _, ok := queueWrite(k); converted && (ok || isConvertedGuard(k, written)) {
			continue
		}
		if converted && (k.name == "ENV" && strings.HasPrefix(k.attr, "IOSCHED_") || k.name == "RUN" && k.value == runProgram) {
			continue
		}
		out = append(out, k.original)
	}
	return out
}
