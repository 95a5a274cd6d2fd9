package rulesaudit

import (
	"path"
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
		lines := strings.Count(text, "\n") + 1
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

// FuzzConvert: for any rules text that --fix would convert, the override
// and the migrated file parse, the migrated file writes no queue
// attribute iosched knows, and the override keeps no converted write.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		"SUBSYSTEM!=\"block\", GOTO=\"e\"\nACTION==\"add|change\", ENV{X}=\"1\", ATTR{queue/scheduler}=\"bfq\", GOTO=\"e\"\nLABEL=\"e\"\n",
		"KERNEL==\"sd*\", \\\n  ATTR{queue/read_ahead_kb}=\"4096\"\n# c\n",
		"ATTR{queue/scheduler}!=\"bfq\", ATTR{queue/scheduler}=e\"bfq\"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		rules, err := readRules(strings.NewReader(text))
		if err != nil {
			return
		}
		convert := map[int]bool{}
		for _, fd := range audit("src", rules) {
			if fd.ViaRUN {
				return
			}
			convert[fd.Line] = true
		}
		if len(convert) == 0 || checkRules("src", rules, convert) != nil {
			return
		}
		for name, out := range map[string]string{
			"override": overrideText(text, rules, convert, "/etc/udev/rules.d/61-iosched-migrated-src"),
			"migrated": migratedText("src", rules, convert),
		} {
			got, err := readRules(strings.NewReader(out))
			if err != nil {
				t.Fatalf("%s does not read back: %v\n%s", name, err, out)
			}
			if name == "override" {
				if found := audit("override", got); len(found) > 0 {
					t.Fatalf("override still writes: %v\n%s", found[0], out)
				}
				continue
			}
			for _, r := range got {
				for _, k := range r.keys {
					if attr, ok := queueWrite(k); ok && known(attr) {
						t.Fatalf("migrated file writes queue/%s:\n%s", attr, out)
					}
				}
			}
		}
	})
}
