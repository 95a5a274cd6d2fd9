package queueattr

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseMeasured(t *testing.T) {
	const head = "# written by test/vm/kernels measure on 2026-12-01\n"
	tests := []struct {
		name, in string
		want     []MeasuredKernel
		err      string
	}{
		{name: "two kernels", in: head +
			"6.12.117+\tread_ahead_kb\tok\t19600000\t20\t20\t0\n" +
			"7.3.4+\tread_ahead_kb\tok\t5000\t0\t20\t0\n" +
			"\n" +
			"6.12.117+\tscheduler=none\tok\t27700000\t20\t20\t20\n" +
			"6.12.117+\twbt_lat_usec\tabsent\t-\t-\t-\t-\n" +
			"7.3.4+\tbfq:iosched/slice_idle\tok\t6000\t0\t20\t0\n",
			want: []MeasuredKernel{
				{Release: "6.12.117+", Kernel: Kernel{6, 12}, Rows: []Measurement{
					{Key: "read_ahead_kb", Status: "ok", Median: 19600 * time.Microsecond, Freezes: 20, Writes: 20},
					{Key: "scheduler=none", Status: "ok", Median: 27700 * time.Microsecond, Freezes: 20, Writes: 20, Modprobe: 20},
					{Key: "wbt_lat_usec", Status: "absent"},
				}},
				{Release: "7.3.4+", Kernel: Kernel{7, 3}, Rows: []Measurement{
					{Key: "read_ahead_kb", Status: "ok", Median: 5 * time.Microsecond, Writes: 20},
					{Key: "bfq:iosched/slice_idle", Status: "ok", Median: 6 * time.Microsecond, Writes: 20},
				}},
			}},
		{name: "comments only", in: head},
		{name: "six fields", in: head + "7.3.4+\trotational\tok\t1\t1\t1\n",
			err: "kernels.tsv:2: 6 tab-separated fields, want 7 (VERSION KEY STATUS MEDIAN_NS FREEZES WRITES MODPROBE)"},
		{name: "spaces", in: "7.3.4+ rotational ok 1 1 1 0\n",
			err: "kernels.tsv:1: 1 tab-separated fields, want 7 (VERSION KEY STATUS MEDIAN_NS FREEZES WRITES MODPROBE)"},
		{name: "bad version", in: "seven\trotational\tok\t1\t1\t1\t0\n",
			err: `kernels.tsv:1: field 1 (VERSION): kernel release "seven": want MAJOR.MINOR`},
		{name: "second release of a series", in: "7.3.4+\trotational\tok\t1\t1\t1\t0\n7.3.5\trotational\tok\t1\t1\t1\t0\n",
			err: `kernels.tsv:2: field 1 (VERSION): "7.3.5" is a second 7.3 kernel after "7.3.4+"`},
		{name: "bad key", in: "7.3.4+\tqueue/rotational\tok\t1\t1\t1\t0\n",
			err: `kernels.tsv:1: field 2 (KEY): "queue/rotational": want NAME, scheduler=NAME or SCHED:iosched/NAME`},
		{name: "tunable without scheduler", in: "7.3.4+\t:iosched/slice_idle\tok\t1\t1\t1\t0\n",
			err: `kernels.tsv:1: field 2 (KEY): ":iosched/slice_idle": want NAME, scheduler=NAME or SCHED:iosched/NAME`},
		{name: "key twice", in: "7.3.4+\trotational\tok\t1\t1\t1\t0\n7.3.4+\trotational\tabsent\t-\t-\t-\t-\n",
			err: `kernels.tsv:2: field 2 (KEY): "rotational" on 7.3.4+ measured again (first on line 1)`},
		{name: "bad status", in: "7.3.4+\trotational\tgood\t1\t1\t1\t0\n",
			err: `kernels.tsv:1: field 3 (STATUS): "good": want ok, absent, readonly or failed`},
		{name: "bad median", in: "7.3.4+\trotational\tok\t1.5\t1\t1\t0\n",
			err: `kernels.tsv:1: field 4 (MEDIAN_NS): "1.5": want a count >= 0`},
		{name: "negative freezes", in: "7.3.4+\trotational\tok\t1\t-1\t1\t0\n",
			err: `kernels.tsv:1: field 5 (FREEZES): "-1": want a count >= 0`},
		{name: "no writes", in: "7.3.4+\trotational\tok\t1\t0\t0\t0\n",
			err: `kernels.tsv:1: field 6 (WRITES): 0 writes`},
		{name: "empty modprobe", in: "7.3.4+\trotational\tok\t1\t0\t1\t\n",
			err: `kernels.tsv:1: field 7 (MODPROBE): "": want a count >= 0`},
		{name: "number with absent", in: "7.3.4+\trotational\tabsent\t-\t-\t20\t-\n",
			err: `kernels.tsv:1: field 6 (WRITES): "20": want - when STATUS is absent`},
	}
	for _, tt := range tests {
		got, err := ParseMeasured("kernels.tsv", strings.NewReader(tt.in))
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%s: ParseMeasured error = %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: ParseMeasured: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: ParseMeasured (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestMeasuredAgreesWithFreezeRanges: every measured row of the embedded
// data freezes exactly on the kernels FreezeRanges names for its setting
// (the scheduler on every kernel, the tunables on none), so the cited
// commits and the measurements cannot drift apart.
func TestMeasuredAgreesWithFreezeRanges(t *testing.T) {
	ks, err := Measured()
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) < 2 {
		t.Fatalf("%s: %d kernels, want at least 2", MeasuredFile, len(ks))
	}
	checked := 0
	for _, k := range ks {
		for _, m := range k.Rows {
			if m.Status != "ok" {
				continue
			}
			name := m.Setting()
			in := false
			for _, r := range FreezeRanges(name) {
				in = in || r.Contains(k.Kernel)
			}
			if froze := m.Freezes > 0; froze != in {
				t.Errorf("%s: %s on %s froze %d times in %d writes, but FreezeRanges(%q) = %v does not agree",
					MeasuredFile, m.Key, k.Release, m.Freezes, m.Writes, name, FreezeRanges(name))
			}
			checked++
		}
	}
	if checked == 0 {
		t.Errorf("%s: no measured row", MeasuredFile)
	}
}

// TestMeasuredSettings: every key of the data is a setting iosched knows,
// so the probe finds its rows.
func TestMeasuredSettings(t *testing.T) {
	ks, err := Measured()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		for _, m := range k.Rows {
			s, key := m.Setting(), m.Key
			switch {
			case s == Scheduler:
			case strings.HasPrefix(s, TunablePrefix):
				sched, _, _ := strings.Cut(key, ":")
				if _, ok := Tunables[sched]; !ok {
					t.Errorf("%s: %s on %s: no scheduler %q in Tunables", MeasuredFile, key, k.Release, sched)
				}
			default:
				if _, err := Lookup(s); err != nil {
					t.Errorf("%s: %s on %s: %v", MeasuredFile, key, k.Release, err)
				}
			}
		}
	}
}

func TestNearest(t *testing.T) {
	ks := []MeasuredKernel{
		{Release: "6.12.117+", Kernel: Kernel{6, 12}},
		{Release: "7.2.13", Kernel: Kernel{7, 2}},
		{Release: "7.3.4+", Kernel: Kernel{7, 3}},
	}
	tests := []struct {
		k    Kernel
		want string
	}{
		{Kernel{6, 12}, "6.12.117+"},
		{Kernel{5, 10}, "6.12.117+"},
		{Kernel{6, 15}, "6.12.117+"},
		{Kernel{6, 18}, "7.2.13"}, // 4 releases to 7.2, 6 to 6.12
		{Kernel{7, 2}, "7.2.13"},
		{Kernel{7, 3}, "7.3.4+"},
		{Kernel{8, 1}, "7.3.4+"},
	}
	for _, tt := range tests {
		got, ok := Nearest(tt.k, ks)
		if !ok || got.Release != tt.want {
			t.Errorf("Nearest(%v) = %q, %v, want %q", tt.k, got.Release, ok, tt.want)
		}
	}
	// 6.12 and 7.0 are 8 releases from 6.16 (6.19 is the last 6.x): the
	// older wins, in either order.
	tie := []MeasuredKernel{{Release: "7.0.1", Kernel: Kernel{7, 0}}, {Release: "6.12.117+", Kernel: Kernel{6, 12}}}
	for _, l := range [][]MeasuredKernel{tie, {tie[1], tie[0]}} {
		if got, _ := Nearest(Kernel{6, 16}, l); got.Release != "6.12.117+" {
			t.Errorf("Nearest(6.16) among %s, %s = %q, want the older 6.12.117+", l[0].Release, l[1].Release, got.Release)
		}
	}
	if _, ok := Nearest(Kernel{7, 3}, nil); ok {
		t.Errorf("Nearest(7.3) among none: found one")
	}
	// The embedded data: 6.18 (this project's machines) is 4 releases
	// from 7.2, 5 from 7.3 and 6 from 6.12.
	em, err := Measured()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := Nearest(Kernel{6, 18}, em); got.Kernel != (Kernel{7, 2}) {
		t.Errorf("Nearest(6.18) in %s = %q, want 7.2", MeasuredFile, got.Release)
	}
}

func TestCell(t *testing.T) {
	tests := []struct {
		m    Measurement
		want string
	}{
		{Measurement{Status: "ok", Median: 15900 * time.Microsecond, Freezes: 20, Writes: 20}, "15.9 / 1"},
		{Measurement{Status: "ok", Median: 27700 * time.Microsecond, Freezes: 20, Writes: 20, Modprobe: 20}, "27.7 / 1 (+1 modprobe)"},
		{Measurement{Status: "ok", Median: 5 * time.Microsecond, Writes: 20}, "0.005 / 0"},
		{Measurement{Status: "ok", Median: 100 * time.Microsecond, Freezes: 10, Writes: 20}, "0.1 / 0.5"},
		{Measurement{Status: "absent"}, "absent"},
	}
	for _, tt := range tests {
		if got := tt.m.Cell(); got != tt.want {
			t.Errorf("%+v.Cell() = %q, want %q", tt.m, got, tt.want)
		}
	}
}

// TestMeasuredMatchesDoc: kernels.tsv holds what docs/kernels.md shows,
// cell for cell (test/vm/kernels measure writes both from one run).
func TestMeasuredMatchesDoc(t *testing.T) {
	const doc = "../../docs/kernels.md"
	b, err := os.ReadFile(doc)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s: not in this tree", doc)
	}
	if err != nil {
		t.Fatal(err)
	}
	// want: release -> row label -> cell, from the document's table.
	want := map[string]map[string]string{}
	var releases []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		switch {
		case cells[0] == "setting":
			for _, c := range cells[1:] {
				r, _, _ := strings.Cut(c, " ")
				releases = append(releases, r)
				want[r] = map[string]string{}
			}
		case cells[0] == "---":
		case len(cells) == len(releases)+1:
			for i, r := range releases {
				want[r][cells[0]] = cells[i+1]
			}
		default:
			t.Fatalf("%s: row %q has %d cells for %d kernels", doc, line, len(cells)-1, len(releases))
		}
	}
	ks, err := Measured()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, k := range ks {
		got[k.Release] = map[string]string{}
		for _, m := range k.Rows {
			label := m.Key
			if s, ok := strings.CutPrefix(m.Key, Scheduler+"="); ok {
				label = fmt.Sprintf("scheduler: %s -> %s", s, s)
			} else if s, tn, ok := strings.Cut(m.Key, ":"); ok {
				label = fmt.Sprintf("%s (%s)", tn, s)
			}
			got[k.Release][label] = m.Cell()
		}
	}
	if len(want) == 0 {
		t.Fatalf("%s: no table", doc)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s against %s (-want +got):\n%s", doc, MeasuredFile, diff)
	}
}
