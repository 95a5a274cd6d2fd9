package probe

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/iosched/iosched/helper/queueattr"
)

// TestWriteProbe: the probe's table beside the nearest measured kernel,
// without a device.
func TestWriteProbe(t *testing.T) {
	measured := []queueattr.MeasuredKernel{
		{Release: "6.12.117+", Kernel: queueattr.Kernel{Major: 6, Minor: 12}, Rows: []queueattr.Measurement{
			{Key: "scheduler=none", Status: "ok", Median: 27700 * time.Microsecond, Freezes: 20, Writes: 20, Modprobe: 20},
			{Key: "rotational", Status: "ok", Median: 16600 * time.Microsecond, Freezes: 20, Writes: 20},
			{Key: "read_ahead_kb", Status: "ok", Median: 19600 * time.Microsecond, Freezes: 20, Writes: 20},
		}},
		{Release: "7.3.4+", Kernel: queueattr.Kernel{Major: 7, Minor: 3}, Rows: []queueattr.Measurement{
			{Key: "scheduler=mq-deadline", Status: "ok", Median: 12700 * time.Microsecond, Freezes: 20, Writes: 20},
			{Key: "rotational", Status: "ok", Median: 15800 * time.Microsecond, Freezes: 20, Writes: 20},
			{Key: "wbt_lat_usec", Status: "absent"},
			{Key: "read_ahead_kb", Status: "ok", Median: 5 * time.Microsecond, Writes: 20},
		}},
	}
	rows := func(sched string, ra time.Duration) []Row {
		return []Row{
			{Attr: "scheduler", Value: sched, Median: 24119 * time.Microsecond},
			{Attr: "rotational", Value: "0", Median: 16013 * time.Microsecond},
			{Attr: "wbt_lat_usec", Value: "2000", Median: 16003 * time.Microsecond},
			{Attr: "iostats_passthrough", Note: "not readable here"},
			{Attr: "nomerges", Value: "0", Median: 2 * time.Microsecond},
			{Attr: "read_ahead_kb", Value: "128", Median: ra},
		}
	}
	tests := []struct {
		name string
		rep  Report
		ks   []queueattr.MeasuredKernel
		want []string
	}{
		{name: "6.18 beside 7.3", rep: Report{Disk: "loop0", Release: "6.18.44-fc-v1045", Runs: 20, Rows: rows("mq-deadline", time.Microsecond)}, ks: measured,
			want: []string{
				"probe: loop0 on kernel 6.18.44-fc-v1045, median of 20 unchanged writes each",
				"nearest measured kernel: 7.3.4+ (docs/kernels.md), in ms / freezes per write",
				"ATTRIBUTE                MEDIAN     FREEZES            7.3.4+",
				"scheduler (mq-deadline)  24.119 ms  yes                12.7 / 1",
				"rotational               16.013 ms  yes                15.8 / 1",
				"wbt_lat_usec             16.003 ms  yes                absent",
				"iostats_passthrough      -          not readable here  not measured",
				"nomerges                 0.002 ms   no                 not measured",
				"read_ahead_kb            0.001 ms   (control)          0.005 / 0",
				"freezes: over 1 ms and over 20 times read_ahead_kb (the control)",
				"verdict: this kernel freezes the queue for unchanged writes (3 settings)",
			}},
		// On 6.12 read_ahead_kb freezes too: no control, the 1 ms line alone.
		{name: "6.12, control freezes", rep: Report{Disk: "loop3", Release: "6.12.117-amd64", Runs: 10, Rows: rows("none", 15*time.Millisecond)}, ks: measured,
			want: []string{
				"probe: loop3 on kernel 6.12.117-amd64, median of 10 unchanged writes each",
				"nearest measured kernel: 6.12.117+ (docs/kernels.md), in ms / freezes per write",
				"ATTRIBUTE            MEDIAN     FREEZES            6.12.117+",
				"scheduler (none)     24.119 ms  yes                27.7 / 1 (+1 modprobe)",
				"rotational           16.013 ms  yes                16.6 / 1",
				"wbt_lat_usec         16.003 ms  yes                not measured",
				"iostats_passthrough  -          not readable here  not measured",
				"nomerges             0.002 ms   no                 not measured",
				"read_ahead_kb        15.000 ms  yes                19.6 / 1",
				"freezes: over 1 ms (no control: read_ahead_kb froze too)",
				"verdict: this kernel freezes the queue for unchanged writes (4 settings)",
			}},
		// A 6.18.y without the store fix: the control froze, so it is no
		// control, and nomerges still counts as not frozen.
		{name: "6.18, control froze", rep: Report{Disk: "loop0", Release: "6.18.1", Runs: 5, Rows: rows("bfq", 16*time.Millisecond)}, ks: measured[1:],
			want: []string{
				"probe: loop0 on kernel 6.18.1, median of 5 unchanged writes each",
				"nearest measured kernel: 7.3.4+ (docs/kernels.md), in ms / freezes per write",
				"ATTRIBUTE            MEDIAN     FREEZES            7.3.4+",
				"scheduler (bfq)      24.119 ms  yes                not measured",
				"rotational           16.013 ms  yes                15.8 / 1",
				"wbt_lat_usec         16.003 ms  yes                absent",
				"iostats_passthrough  -          not readable here  not measured",
				"nomerges             0.002 ms   no                 not measured",
				"read_ahead_kb        16.000 ms  yes                0.005 / 0",
				"freezes: over 1 ms (no control: read_ahead_kb froze too)",
				"verdict: this kernel freezes the queue for unchanged writes (4 settings)",
			}},
		{name: "no data", rep: Report{Disk: "loop0", Release: "7.3.4", Runs: 1, Rows: []Row{
			{Attr: "rotational", Value: "0", Median: 3 * time.Microsecond},
			{Attr: "read_ahead_kb", Note: "not readable here"},
		}},
			want: []string{
				"probe: loop0 on kernel 7.3.4, median of 1 unchanged writes each",
				"nearest measured kernel: none in helper/queueattr/kernels.tsv",
				"ATTRIBUTE      MEDIAN    FREEZES",
				"rotational     0.003 ms  no",
				"read_ahead_kb  -         not readable here",
				"freezes: over 1 ms (no control: read_ahead_kb not timed)",
				"verdict: this kernel does not freeze the queue for unchanged writes",
			}},
		{name: "odd release", rep: Report{Disk: "loop0", Release: "custom", Runs: 1, Rows: []Row{
			{Attr: "rotational", Value: "0", Median: 16 * time.Millisecond},
			{Attr: "read_ahead_kb", Value: "128", Median: 2 * time.Microsecond},
		}}, ks: measured,
			want: []string{
				"probe: loop0 on kernel custom, median of 1 unchanged writes each",
				`nearest measured kernel: none (kernel release "custom": want MAJOR.MINOR)`,
				"ATTRIBUTE      MEDIAN     FREEZES",
				"rotational     16.000 ms  yes",
				"read_ahead_kb  0.002 ms   (control)",
				"freezes: over 1 ms and over 20 times read_ahead_kb (the control)",
				"verdict: this kernel freezes the queue for unchanged writes (1 setting)",
			}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := tt.rep.Write(&b, tt.ks); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: Report.Write (-want +got):\n%s", tt.name, diff)
		}
		for _, l := range got {
			if len(l) > 80 {
				t.Errorf("%s: line of %d columns: %q", tt.name, len(l), l)
			}
		}
	}
}

// TestProbeSettings: the scheduler first, the control last, every
// setting that freezes on some kernel in between, once.
func TestProbeSettings(t *testing.T) {
	got := Settings()
	want := []string{"scheduler", "add_random", "discard_max_bytes", "iostats", "iostats_passthrough",
		"max_sectors_kb", "rotational", "stable_writes", "wbt_lat_usec", "write_cache",
		"io_timeout", "nomerges", "nr_requests", "rq_affinity", "read_ahead_kb"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Settings (-want +got):\n%s", diff)
	}
}
