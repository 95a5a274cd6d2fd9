package kmod

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeIndex writes a module index of the two files Loadable reads into
// a directory of the test's own.
func writeIndex(tb testing.TB, alias, dep string) Index {
	dir := tb.TempDir()
	for name, data := range map[string]string{"modules.alias": alias, "modules.dep": dep} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return Index(dir)
}

func TestLoadable(t *testing.T) {
	// As depmod writes them for a kernel with the schedulers as modules:
	// bfq and mq-deadline carry MODULE_ALIAS("...-iosched")
	// (block/bfq-iosched.c:7617, block/mq-deadline.c:1013); kyber's module
	// is named kyber-iosched after its file.
	ix := writeIndex(t,
		"# Aliases extracted from modules themselves.\nalias bfq-iosched bfq\nalias mq-deadline-iosched mq_deadline\nalias pci:v00008086d* e1000e\n",
		"kernel/block/kyber-iosched.ko.xz:\nkernel/block/bfq.ko.xz:\nkernel/block/mq-deadline.ko.xz:\n")
	tests := []struct {
		name string
		want bool
	}{
		{"bfq", true},
		{"mq-deadline", true},
		{"kyber", true},
		{"deadline", false}, // the alias is the elevator's, no module provides "deadline-iosched"
		{"none", false},
		{"e1000e", false},
		{"bf", false},
	}
	for _, tt := range tests {
		got, err := ix.Loadable(tt.name)
		if err != nil || got != tt.want {
			t.Errorf("Loadable(%q) = %v, %v, want %v", tt.name, got, err, tt.want)
		}
	}
	if got, err := Index(filepath.Join(string(ix), "missing")).Loadable("bfq"); got || err != nil {
		t.Errorf("Loadable with no index = %v, %v, want false, nil", got, err)
	}
	if got := ForRelease("/", "7.3.4"); got != "/lib/modules/7.3.4" {
		t.Errorf("ForRelease = %q", got)
	}
}

// TestLoadableLines: the name must be an alias's own name, or a module's
// file name, whole, wherever it occurs in the index.
func TestLoadableLines(t *testing.T) {
	tests := []struct {
		name, alias, dep, sched string
		want                    bool
	}{
		{"alias among others, no final newline", "alias a b\nalias  bfq-iosched\tbfq", "", "bfq", true},
		{"name only as a module", "alias pci:v1 bfq-iosched\n", "", "bfq", false},
		{"longer alias", "alias bfq-iosched-old x\nalias xbfq-iosched x\n", "", "bfq", false},
		{"alias with no module", "alias bfq-iosched\n", "", "bfq", false},
		{"second hit matches", "alias x bfq-iosched\nalias bfq-iosched bfq\n", "", "bfq", true},
		{"module with underscores", "", "kernel/block/kyber_iosched.ko.zst: kernel/a.ko\n", "kyber", true},
		{"module without directory", "", "kyber-iosched.ko:\n", "kyber", true},
		{"name only as a dependency", "", "kernel/a.ko: kernel/block/kyber-iosched.ko\n", "kyber", false},
		{"longer module name", "", "kernel/block/kyber-iosched2.ko:\nkernel/xkyber-iosched.ko:\n", "kyber", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := writeIndex(t, tt.alias, tt.dep).Loadable(tt.sched)
			if err != nil || got != tt.want {
				t.Errorf("Loadable(%q) = %v, %v, want %v", tt.sched, got, err, tt.want)
			}
		})
	}
}

// BenchmarkLoadableLarge: kyber, which is no alias, in an index the size
// of a distribution kernel's (27,000 aliases, 4,000 modules).
func BenchmarkLoadableLarge(b *testing.B) {
	var alias, dep strings.Builder
	for i := 0; i < 27000; i++ {
		fmt.Fprintf(&alias, "alias pci:v%08Xd*sv*sd*bc*sc*i* mod%d\n", i, i%4000)
	}
	for i := 0; i < 4000; i++ {
		fmt.Fprintf(&dep, "kernel/drivers/x/mod%d.ko.xz: kernel/drivers/y/dep%d.ko.xz\n", i, i)
	}
	dep.WriteString("kernel/block/kyber-iosched.ko.xz:\n")
	ix := writeIndex(b, alias.String(), dep.String())
	for b.Loop() {
		if ok, err := ix.Loadable("kyber"); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// TestErrorNamesPathOnce: a broken index is reported naming its path
// once, not "read X: read X: ...".
func TestErrorNamesPathOnce(t *testing.T) {
	dir := t.TempDir()
	alias := filepath.Join(dir, "modules.alias")
	if err := os.Mkdir(alias, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Index(dir).Loadable("bfq")
	if err == nil {
		t.Fatal("a directory as modules.alias: no error")
	}
	if n := strings.Count(err.Error(), alias); n != 1 {
		t.Errorf("error %q names %s %d times, want once", err, alias, n)
	}
}

// TestLoadableOnce: each name's answer is looked up in the index once,
// and an index that cannot be read is asked again.
func TestLoadableOnce(t *testing.T) {
	ix := writeIndex(t, "alias bfq-iosched bfq\n", "")
	reads := 0
	loadable := LoadableOnce(func() Index { reads++; return ix })
	for _, name := range []string{"bfq", "kyber", "bfq", "kyber"} {
		if _, err := loadable(name); err != nil {
			t.Fatal(err)
		}
	}
	if ok, _ := loadable("bfq"); !ok || reads != 2 {
		t.Errorf("bfq loadable %v after %d index reads, want true after 2", ok, reads)
	}
	reads = 0
	dir := t.TempDir() // modules.alias a directory: a read error
	if err := os.Mkdir(filepath.Join(dir, "modules.alias"), 0o755); err != nil {
		t.Fatal(err)
	}
	broken := LoadableOnce(func() Index { reads++; return Index(dir) })
	for range 2 {
		if _, err := broken("bfq"); err == nil {
			t.Fatal("Loadable with modules.alias a directory: no error")
		}
	}
	if reads != 2 {
		t.Errorf("an unreadable index was read %d times for two questions, want 2", reads)
	}
}
