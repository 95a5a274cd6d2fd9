package kmod

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// As depmod writes them for a kernel with the schedulers as modules:
	// bfq and mq-deadline carry MODULE_ALIAS("...-iosched")
	// (block/bfq-iosched.c:7617, block/mq-deadline.c:1013); kyber's module
	// is named kyber-iosched after its file.
	write("modules.alias", "# Aliases extracted from modules themselves.\nalias bfq-iosched bfq\nalias mq-deadline-iosched mq_deadline\nalias pci:v00008086d* e1000e\n")
	write("modules.dep", "kernel/block/kyber-iosched.ko.xz:\nkernel/block/bfq.ko.xz:\nkernel/block/mq-deadline.ko.xz:\n")
	ix := Index(dir)
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
	if got, err := Index(filepath.Join(dir, "missing")).Loadable("bfq"); got || err != nil {
		t.Errorf("Loadable with no index = %v, %v, want false, nil", got, err)
	}
	if got := ForRelease("/", "7.3.4"); got != "/lib/modules/7.3.4" {
		t.Errorf("ForRelease = %q", got)
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
