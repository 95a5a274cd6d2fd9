package queueattr

import (
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// queue is a queue's state in sysfs, as Predict reads it.
type queue map[string]string

func (q queue) read(a string) (string, error) {
	v, ok := q[a]
	if !ok {
		return "", fmt.Errorf("no %s", a)
	}
	return v, nil
}

// with returns q with some attributes changed.
func (q queue) with(kv ...string) queue {
	c := queue{}
	for k, v := range q {
		c[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		c[kv[i]] = kv[i+1]
	}
	return c
}

// ssd is a writable loop device on a non-rotational file system, with
// mq-deadline; hdd a rotational disk with 4 KiB blocks and discard.
var (
	ssd = queue{
		"scheduler": "none [mq-deadline]", "rotational": "0", "max_hw_sectors_kb": "32767",
		"logical_block_size": "512", "optimal_io_size": "0", "minimum_io_size": "512",
		"discard_granularity": "0", "discard_max_hw_bytes": "0", "nr_requests": "256",
		"../mq/0/nr_tags": "128", "../mq/0/nr_reserved_tags": "0", "write_cache": "write back",
		"fua": "0", "../ro": "0", "../loop/backing_file": "/tmp/img",
	}
	hdd = queue{
		"scheduler": "[none] mq-deadline", "rotational": "1", "max_hw_sectors_kb": "2560",
		"logical_block_size": "4096", "optimal_io_size": "0", "minimum_io_size": "4096",
		"discard_granularity": "4096", "discard_max_hw_bytes": "1073741824", "nr_requests": "64",
		"../mq/0/nr_tags": "64", "../mq/0/nr_reserved_tags": "1", "write_cache": "write through",
		"fua": "0", "../ro": "0",
	}
	readOnlyLoop = ssd.with("write_cache", "write through", "../ro", "1", LoopReadOnly, "1")
	// blockdev --setro on a loop device attached writable: ro reads 1 too.
	setroLoop = ssd.with("write_cache", "write through", "../ro", "1", LoopReadOnly, "0")
	fuaDisk   = hdd.with("write_cache", "write through", "fua", "1")
	bigIOOpt  = ssd.with("optimal_io_size", "8388608")
)

// TestPredict is the kernel model: for every attribute and tunable
// iosched knows, values across the store's range and what the kernel
// does with each.
func TestPredict(t *testing.T) {
	type tc struct {
		name, value string
		q           queue
		want        Outcome
	}
	keepAs := func(v string) Outcome { return Outcome{Effect: Keep, Kept: v} }
	cl := func(v string) Outcome { return Outcome{Effect: Clamp, Kept: v} }
	ref := Outcome{Effect: Refuse}
	ign := Outcome{Effect: Ignore}
	tests := []tc{
		{"read_ahead_kb", "0", ssd, keepAs("0")},
		{"read_ahead_kb", "128", ssd, keepAs("128")},
		{"read_ahead_kb", "+128\n", ssd, keepAs("128")},
		{"read_ahead_kb", "130", ssd, cl("128")},
		{"read_ahead_kb", "4294967292", ssd, keepAs("4294967292")},
		{"read_ahead_kb", "4294967296", ssd, ref},
		{"read_ahead_kb", "-1", ssd, ref},
		{"read_ahead_kb", "0x10", ssd, ref},
		{"read_ahead_kb", "", ssd, ref},

		{"max_sectors_kb", "1280", ssd, keepAs("1280")},
		{"max_sectors_kb", "0", ssd, keepAs("4096")},      // the default: BLK_DEF_MAX_SECTORS_CAP
		{"max_sectors_kb", "0", hdd, keepAs("2560")},      // capped by max_hw_sectors_kb
		{"max_sectors_kb", "0", bigIOOpt, keepAs("8192")}, // io_opt above 4 MiB
		{"max_sectors_kb", "4096", hdd, cl("2560")},       // bounded by max_hw_sectors_kb
		{"max_sectors_kb", "1282", hdd, cl("1280")},       // 4 KiB blocks
		{"max_sectors_kb", "2", ssd, ref},                 // under BLK_MIN_SEGMENT_SIZE
		{"max_sectors_kb", "2147483648", ssd, cl("4096")}, // << 1 overflows to 0
		{"max_sectors_kb", "4294967296", ssd, ref},

		{"discard_max_bytes", "0", ssd, keepAs("0")},
		{"discard_max_bytes", "4096", ssd, ref}, // no discard support
		{"discard_max_bytes", "8192", hdd, keepAs("8192")},
		{"discard_max_bytes", "6000", hdd, ref}, // not a multiple of the granularity
		{"discard_max_bytes", "2147483648", hdd, cl("1073741824")},

		{"nr_requests", "256", ssd, keepAs("256")}, // unchanged: returns early
		{"nr_requests", "64", ssd, keepAs("64")},
		{"nr_requests", "2048", ssd, keepAs("2048")},
		{"nr_requests", "2049", ssd, ref}, // MAX_SCHED_RQ
		{"nr_requests", "100000", ssd, ref},
		{"nr_requests", "1", ssd, cl("4")},
		{"nr_requests", "32", hdd, keepAs("32")},
		{"nr_requests", "65", hdd, ref}, // above the depth without a scheduler
		{"nr_requests", "4", hdd.with("../mq/0/nr_reserved_tags", "4"), ref},

		{"nomerges", "0", ssd, keepAs("0")},
		{"nomerges", "1", ssd, keepAs("1")},
		{"nomerges", "2", ssd, keepAs("2")},
		{"nomerges", "5", ssd, cl("1")},

		{"rq_affinity", "0", ssd, keepAs("0")},
		{"rq_affinity", "2", ssd, keepAs("2")},
		{"rq_affinity", "3", ssd, ign},

		{"io_timeout", "30000", ssd, keepAs("30000")},
		{"io_timeout", "0", ssd, ref},
		{"io_timeout", "4294967296", ssd, ref},
		{"io_timeout", "2147483647", ssd.with(KernelHZ, "1000 test"), keepAs("2147483647")},
		{"io_timeout", "2147483647", ssd.with(KernelHZ, "250 test"), cl("2147483648")},
		{"io_timeout", "30001", ssd.with(KernelHZ, "250 test"), cl("30004")},
		{"io_timeout", "30001", ssd, Outcome{Effect: Untold}},    // HZ unknown: only what every HZ keeps
		{"io_timeout", "2147483648", ssd, Outcome{Effect: Wrap}}, // MAX_JIFFY_OFFSET

		{"wbt_lat_usec", "0", ssd, keepAs("0")},
		{"wbt_lat_usec", "75000", ssd, keepAs("75000")},
		{"wbt_lat_usec", "-1", ssd, keepAs("2000")},
		{"wbt_lat_usec", "-1", hdd, keepAs("75000")},
		{"wbt_lat_usec", "-2", ssd, ref},
		{"wbt_lat_usec", "18446744073709551", ssd, keepAs("18446744073709551")},
		{"wbt_lat_usec", "9223372036854775807", ssd, cl("18446744073709550")},
		{"wbt_lat_usec", "9223372036854775808", ssd, ref},
		{"wbt_lat_usec", "x", ssd, ref},

		{"write_cache", "write back", ssd, keepAs("write back")},
		{"write_cache", "write back", fuaDisk, keepAs("write back")},
		{"write_cache", "write back", readOnlyLoop, ign},
		{"write_cache", "write back", setroLoop, Outcome{Unknown, "write back", ""}},
		{"write_cache", "write back", ssd.with("write_cache", "write through", "../ro", "1"), Outcome{Unknown, "write back", ""}},
		{"write_cache", "write back", hdd.with("../cache_type", "write through"), ign},
		{"write_cache", "write back", hdd, Outcome{Unknown, "write back", ""}},
		{"write_cache", "write through", readOnlyLoop, keepAs("write through")},
		{"write_cache", "none", ssd, keepAs("write through")},
		{"write_cache", "writeback", ssd, ref},
	}
	for _, f := range []string{"rotational", "add_random", "iostats", "stable_writes", "iostats_passthrough"} {
		tests = append(tests, tc{f, "0", ssd, keepAs("0")}, tc{f, "1", ssd, keepAs("1")},
			tc{f, "7", ssd, cl("1")}, tc{f, "-1", ssd, ref}, tc{f, "4294967296", ssd, ref})
	}
	// Every scheduler tunable: its bounds, one past them, and a value
	// that does not fit the store's parsing, on a HZ=1000 kernel (where
	// a jiffy is a ms); TestTunableStores has each HZ.
	k1000 := queue{KernelHZ: "1000 test"}
	for _, n := range sortedKeys(tunables) {
		tu := tunables[n]
		name := TunablePrefix + n
		lo, hi := fmt.Sprint(tu.min), fmt.Sprint(tu.max)
		tests = append(tests, tc{name, lo, k1000, keepAs(lo)})
		switch tu.unit {
		case nsU32FromMs, nsU32FromUs:
			tests = append(tests, tc{name, hi, k1000, Outcome{Effect: Wrap}})
		default:
			tests = append(tests, tc{name, hi, k1000, keepAs(hi)})
		}
		switch tu.parse {
		case parseInt:
			if tu.min > -1<<31 {
				tests = append(tests, tc{name, fmt.Sprint(tu.min - 1), k1000, cl(lo)})
			}
			if tu.max < 1<<31-1 {
				tests = append(tests, tc{name, fmt.Sprint(tu.max + 1), k1000, cl(hi)})
			}
			tests = append(tests, tc{name, "4294967296", k1000, ref}, tc{name, "010", k1000, ref})
		case parseUlong:
			if tu.min > 0 {
				tests = append(tests, tc{name, "0", k1000, cl(lo)})
			}
			if tu.unit == exact || tu.unit == jiffiesUint {
				tests = append(tests, tc{name, fmt.Sprint(uint64(tu.max) + 1), k1000, cl(hi)})
			}
			tests = append(tests, tc{name, "-1", k1000, ref}, tc{name, "18446744073709551616", k1000, ref})
		case parseUllong:
			tests = append(tests, tc{name, "18446744073709551615", k1000, keepAs("18446744073709551615")},
				tc{name, "-1", k1000, ref})
		}
	}
	tests = append(tests,
		tc{"iosched/front_merges", "7", nil, cl("1")},
		tc{"iosched/fifo_batch", "-1", nil, cl("0")},
		tc{"iosched/some_future_knob", "-5", nil, keepAs("-5")},
		tc{"iosched/some_future_knob", "x", nil, ref},
	)

	covered := map[string]bool{}
	for _, tt := range tests {
		s, err := Lookup(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		covered[tt.name] = true
		var r Reader
		if tt.q != nil {
			r = tt.q.read
		}
		got := s.Predict(tt.value, r)
		got.Why = "" // the reason is for people; the effect and value are the contract
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s=%q: Predict (-want +got):\n%s", tt.name, tt.value, diff)
		}
		// Check agrees: it refuses what the kernel would not keep.
		err = s.Refusal(tt.value, r)
		if bad := tt.want.Effect == Clamp || tt.want.Effect == Refuse || tt.want.Effect == Ignore || tt.want.Effect == Wrap || tt.want.Effect == Untold; bad != (err != nil) || err != nil && !errors.Is(err, ErrBadValue) {
			t.Errorf("%s=%q: Refusal = %v, want refused %v", tt.name, tt.value, err, bad)
		}
	}
	var missing []string
	for _, n := range Names() {
		if !covered[n] {
			missing = append(missing, n)
		}
	}
	for _, n := range sortedKeys(tunables) {
		if !covered[TunablePrefix+n] {
			missing = append(missing, TunablePrefix+n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("no case for %q", missing)
	}
}

func TestUnchanged(t *testing.T) {
	hz250, hz100 := ssd.with(KernelHZ, "250 test"), ssd.with(KernelHZ, "100 test")
	tests := []struct {
		attr, cur, want string
		q               queue
		same            bool
	}{
		{"rotational", "1", "1", ssd, true},
		{"rotational", "1", "0", ssd, false},
		{"add_random", "0", "0\n", ssd, true},
		{"iostats", "1", "+1", ssd, true}, // kstrtoul takes one '+'
		{"read_ahead_kb", "128", "128", ssd, true},
		{"read_ahead_kb", "128", "132", ssd, false},
		{"nr_requests", "64", "64", ssd, true},
		{"nr_requests", "64", "128", ssd, false},
		{"nomerges", "2", "2", ssd, true},
		{"nomerges", "0", "2", ssd, false},
		{"rq_affinity", "1", "2", ssd, false},
		{"max_sectors_kb", "1280", "1280", ssd, true},
		{"max_sectors_kb", "1280", "1284", hdd, false},
		{"max_sectors_kb", "4096", "0", ssd, true}, // 0 asks for the default, already there
		{"max_sectors_kb", "1280", "0", ssd, false},
		{"wbt_lat_usec", "75000", "-1", hdd, true},
		{"wbt_lat_usec", "2000", "-1", ssd, true},
		{"wbt_lat_usec", "75000", "-1", ssd, false},
		{"wbt_lat_usec", "0", "0", ssd, true},
		{"wbt_lat_usec", "", "0", ssd, false}, // unreadable before wbt is set up
		{"write_cache", "write back", "write back", ssd, true},
		{"write_cache", "write through", "none", ssd, true},
		{"write_cache", "write back", "write through", ssd, false},
		{"write_cache", "write through", "write back", hdd, false}, // only a write can tell
		{"iosched/read_expire", "500", "500", hz250, true},
		{"iosched/read_expire", "500", "240", hz250, false},
		{"iosched/read_expire", "508", "500", hz250, false}, // HZ=250 keeps 500 exactly
		{"iosched/read_expire", "508", "500", hz100, false},
		{"iosched/read_expire", "500", "500", ssd, true}, // HZ unknown: 500 is exact on every HZ
		{"iosched/fifo_batch", "17", "16", ssd, false},   // a count, not jiffies
		{"io_timeout", "30000", "30000", hz250, true},
		{"io_timeout", "30004", "30000", hz250, false},
	}
	for _, tt := range tests {
		s, err := Lookup(tt.attr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Unchanged(tt.cur, tt.want, tt.q.read)
		if err != nil || got != tt.same {
			t.Errorf("%s: Unchanged(%q, %q) = %v, %v, want %v", tt.attr, tt.cur, tt.want, got, err, tt.same)
		}
	}
	// What the queue would not keep is an error, not "changed".
	s, _ := Lookup("write_cache")
	if _, err := s.Unchanged("write through", "write back", readOnlyLoop.read); !errors.Is(err, ErrBadValue) {
		t.Errorf("write_cache=write back on a read-only loop device: Unchanged error %v, want ErrBadValue", err)
	}
	// HZ unknown (the queue cannot tell it): bfq's default timeout_sync
	// on HZ=250, 124 ms, is no multiple of 20 ms. The file showing it
	// needs no store; any other value is still refused.
	s, _ = Lookup("iosched/timeout_sync")
	if same, err := s.Unchanged("124", "124", ssd.read); err != nil || !same {
		t.Errorf("timeout_sync 124 showing 124, HZ unknown: Unchanged = %v, %v, want true, nil", same, err)
	}
	if _, err := s.Unchanged("124", "125", ssd.read); !errors.Is(err, ErrBadValue) {
		t.Errorf("timeout_sync 125 showing 124, HZ unknown: Unchanged error %v, want ErrBadValue", err)
	}
}

func TestSwitchResets(t *testing.T) {
	type res struct {
		After  string
		Resets bool
	}
	tests := []struct {
		name, from, to string
		want           res
	}{
		{"nr_requests", "none", "mq-deadline", res{"256", true}}, // 2 * min(depth 128, 128)
		{"nr_requests", "mq-deadline", "none", res{"128", true}}, // the tag set's depth
		{"nr_requests", "none", "none", res{"", false}},
		{"wbt_lat_usec", "none", "bfq", res{"", true}},
		{"wbt_lat_usec", "none", "mq-deadline", res{"", false}},
		{"iosched/fifo_batch", "mq-deadline", "kyber", res{"", true}},
		{"read_ahead_kb", "none", "bfq", res{"", false}},
	}
	for _, tt := range tests {
		a, r := SwitchResets(tt.name, tt.from, tt.to, ssd.read)
		if diff := cmp.Diff(tt.want, res{a, r}); diff != "" {
			t.Errorf("SwitchResets(%s, %s -> %s) (-want +got):\n%s", tt.name, tt.from, tt.to, diff)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, bad := range []string{"scheduler", "../dev", "hw_sector_size", "iosched/", "iosched/../x", "iosched/a/b", "Rotational", ""} {
		if _, err := Lookup(bad); !errors.Is(err, ErrUnknown) {
			t.Errorf("Lookup(%q) = %v, want ErrUnknown", bad, err)
		}
	}
	want := []string{"scheduler", "add_random", "discard_max_bytes", "iostats", "iostats_passthrough", "max_sectors_kb", "rotational", "stable_writes", "wbt_lat_usec", "write_cache"}
	if diff := cmp.Diff(want, FreezingNames()); diff != "" {
		t.Errorf("FreezingNames() (-want +got):\n%s", diff)
	}
}
