package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/iosched/iosched/helper/queueattr"
)

func TestWrite(t *testing.T) {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if seen[line] {
			t.Errorf("line %q printed twice", line)
		}
		seen[line] = true
		f := strings.Fields(line)
		kinds[f[0]]++
		if f[0] == "attr" {
			if _, err := queueattr.Lookup(f[1]); err != nil {
				t.Errorf("line %q: %v", line, err)
			}
		}
	}
	tunables := 0
	for _, ts := range queueattr.Tunables {
		tunables += len(ts)
	}
	want := map[string]int{"attr": len(queueattr.Names()), "sched": len(queueattr.Tunables) + 1, "tune": tunables}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("lines by kind (-want +got):\n%s", diff)
	}
	for _, l := range []string{"sched none", "sched mq-deadline", "tune mq-deadline fifo_batch", "attr nomerges"} {
		if !seen[l] {
			t.Errorf("no line %q", l)
		}
	}
}
