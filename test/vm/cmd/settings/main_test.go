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

func TestWriteTable(t *testing.T) {
	const tsv = "# a comment\n" +
		"6.12.117+\tnomerges\tok\t11800000\t20\t20\t0\n" +
		"6.12.117+\tscheduler=none\tok\t29600000\t20\t20\t20\n" +
		"7.3.4+\tnomerges\tok\t12000\t0\t20\t0\n" +
		"7.3.4+\tmq-deadline:iosched/fifo_batch\tabsent\t-\t-\t-\t-\n"
	ks, err := queueattr.ParseMeasured("test.tsv", strings.NewReader(tsv))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeTable(&b, ks); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		got[strings.SplitN(line, " | ", 2)[0]] = line
	}
	for _, want := range []string{
		"| nomerges | 11.8 / 1 | 0.012 / 0 |",
		"| scheduler: none -> none | 29.6 / 1 (+1 modprobe) | - |",
		"| iosched/fifo_batch (mq-deadline) | - | absent |",
		"| rotational | - | - |",
	} {
		k := strings.SplitN(want, " | ", 2)[0]
		if diff := cmp.Diff(want, got[k]); diff != "" {
			t.Errorf("row %q (-want +got):\n%s", k, diff)
		}
	}
	if n, want := len(got), len(settings()); n != want {
		t.Errorf("%d rows, want one a setting (%d)", n, want)
	}
}
