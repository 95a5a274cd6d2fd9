package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckAndWriteTargets(t *testing.T) {
	var b bench
	words := []string{b.check("fast: 1.5x", true), b.check("small: 5 MB", false)}
	if diff := cmp.Diff([]string{"ok", "not ok"}, words); diff != "" {
		t.Errorf("report words (-want +got):\n%s", diff)
	}
	var w strings.Builder
	if err := writeTargets(&w, b.targets); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("ok fast: 1.5x\nfail small: 5 MB\n", w.String()); diff != "" {
		t.Errorf("target lines (-want +got):\n%s", diff)
	}
}
