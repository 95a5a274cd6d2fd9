package queueattr

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTunableStores is each scheduler's stores on each kernel iosched
// read them in (Debian's linux-source 6.12.117, 7.2.13 and 7.3.4:
// bfq-iosched.c, mq-deadline.c, kyber-iosched.c; their stores and
// types are the same in all three but for 6.12's async_depth) and on
// the host's 6.18, for each HZ a kernel is built with: what a write of
// each value reads back, worked out by hand from the store, the type it
// keeps and the show.
func TestTunableStores(t *testing.T) {
	keepAs := func(v string) Outcome { return Outcome{Effect: Keep, Kept: v} }
	cl := func(v string) Outcome { return Outcome{Effect: Clamp, Kept: v} }
	wrap := Outcome{Effect: Wrap}
	ref := Outcome{Effect: Refuse}
	// per HZ: 100, 250, 1000 (ticks of 10, 4 and 1 ms).
	type perHZ [3]Outcome
	same := func(o Outcome) perHZ { return perHZ{o, o, o} }
	type row struct {
		name, value string
		want        perHZ
	}
	deadline := []row{
		{"read_expire", "500", same(keepAs("500"))},
		{"read_expire", "501", perHZ{cl("510"), cl("504"), keepAs("501")}},
		{"read_expire", "508", perHZ{cl("510"), keepAs("508"), keepAs("508")}},
		{"read_expire", "250", perHZ{keepAs("250"), cl("252"), keepAs("250")}},
		{"read_expire", "0", same(keepAs("0"))},
		{"read_expire", "-1", same(cl("0"))},
		// The int of ms rounded up to a jiffy passes INT_MAX: %d shows it
		// negative.
		{"read_expire", "2147483640", same(keepAs("2147483640"))},
		{"read_expire", "2147483641", perHZ{wrap, cl("2147483644"), keepAs("2147483641")}},
		{"read_expire", "2147483645", perHZ{wrap, wrap, keepAs("2147483645")}},
		{"write_expire", "2147483647", perHZ{wrap, wrap, keepAs("2147483647")}},
		{"prio_aging_expire", "10000", same(keepAs("10000"))},
		{"prio_aging_expire", "10001", perHZ{cl("10010"), cl("10004"), keepAs("10001")}},
		{"fifo_batch", "16", same(keepAs("16"))},
		{"writes_starved", "-2147483648", same(keepAs("-2147483648"))},
		{"front_merges", "2", same(cl("1"))},
		{"read_expire", "0x10", same(ref)},
	}
	bfq := []row{
		// bfq_slice_idle is a u32 of ns: 4294 ms and 4294967 us fit,
		// one more wraps (and reads back 0 and 0).
		{"slice_idle", "4294", same(keepAs("4294"))},
		{"slice_idle", "4295", same(wrap)},
		{"slice_idle", "2147483648", same(wrap)}, // clamped to INT_MAX, then wraps
		{"slice_idle_us", "4294967", same(keepAs("4294967"))},
		{"slice_idle_us", "4294968", same(wrap)},
		{"slice_idle_us", "8000", same(keepAs("8000"))},
		// An unsigned int of jiffies shown with %u: INT_MAX rounded up to
		// a jiffy still shows; 2147483648 is clamped to INT_MAX, which
		// HZ=250 shows as 2147483648 again.
		{"timeout_sync", "2147483648", perHZ{cl("2147483650"), keepAs("2147483648"), cl("2147483647")}},
		{"timeout_sync", "2147483647", perHZ{cl("2147483650"), cl("2147483648"), keepAs("2147483647")}},
		{"timeout_sync", "124", perHZ{cl("130"), keepAs("124"), keepAs("124")}},
		{"timeout_sync", "0", perHZ{cl("10"), cl("4"), cl("1")}},
		{"timeout_sync", "4294967296", perHZ{cl("2147483650"), cl("2147483648"), cl("2147483647")}},
		{"fifo_expire_sync", "2147483647", same(keepAs("2147483647"))}, // a u64 of ns
		{"fifo_expire_sync", "2147483648", same(cl("2147483647"))},
		{"back_seek_max", "16384", same(keepAs("16384"))},
		{"max_budget", "0", same(keepAs("0"))},
		{"low_latency", "2", same(cl("1"))},
		{"strict_guarantees", "1", same(keepAs("1"))},
		{"slice_idle", "-1", same(ref)},
	}
	kyber := []row{
		{"read_lat_nsec", "2000000", same(keepAs("2000000"))},
		{"write_lat_nsec", "18446744073709551615", same(keepAs("18446744073709551615"))},
		{"write_lat_nsec", "18446744073709551616", same(ref)},
	}
	withAsyncDepth := append(deadline[:len(deadline):len(deadline)],
		row{"async_depth", "0", same(cl("1"))}, row{"async_depth", "64", same(keepAs("64"))})
	kernels := []struct {
		name   string
		scheds map[string][]row
	}{
		{"6.12.117", map[string][]row{"mq-deadline": withAsyncDepth, "bfq": bfq, "kyber": kyber}},
		{"7.2.13", map[string][]row{"mq-deadline": deadline, "bfq": bfq, "kyber": kyber}},
		{"7.3.4", map[string][]row{"mq-deadline": deadline, "bfq": bfq, "kyber": kyber}},
		{"6.18.44 (host)", map[string][]row{"mq-deadline": withAsyncDepth, "bfq": bfq, "kyber": kyber}},
	}
	checks := 0
	for _, k := range kernels {
		for sched, rows := range k.scheds {
			for _, r := range rows {
				if got := tunables[r.name].sched; got != sched {
					t.Errorf("%s: %s is a tunable of %q, want %q", k.name, r.name, got, sched)
				}
				s, err := Lookup(TunablePrefix + r.name)
				if err != nil {
					t.Fatal(err)
				}
				for i, hz := range []int{100, 250, 1000} {
					q := queue{KernelHZ: fmt.Sprintf("%d test", hz)}
					got := s.Predict(r.value, q.read)
					got.Why = ""
					if diff := cmp.Diff(r.want[i], got); diff != "" {
						t.Errorf("%s HZ=%d %s %s=%s (-want +got):\n%s", k.name, hz, sched, r.name, r.value, diff)
					}
					checks++
				}
			}
		}
	}
	if checks == 0 {
		t.Fatal("no case ran")
	}
}

// TestTunableHZUnknown: with no HZ, only what every HZ keeps as written
// is taken, and without a queue (Check, the value alone) nothing that
// depends on HZ is refused yet.
func TestTunableHZUnknown(t *testing.T) {
	noHZ := queue{}
	tests := []struct {
		name, value string
		q           queue
		want        Effect
	}{
		{"iosched/read_expire", "500", noHZ, Keep},
		{"iosched/read_expire", "501", noHZ, Untold},
		{"iosched/timeout_sync", "125", noHZ, Untold},
		{"iosched/timeout_sync", "120", noHZ, Keep},
		{"iosched/read_expire", "501", nil, Unknown},
		{"iosched/slice_idle", "4295", nil, Wrap}, // whatever the HZ
		{"iosched/read_expire", "500", queue{KernelHZ: "300 /boot/config-x"}, Keep},
		{"iosched/read_expire", "501", queue{KernelHZ: "300 /boot/config-x"}, Untold},
	}
	for _, tt := range tests {
		s, _ := Lookup(tt.name)
		var r Reader
		if tt.q != nil {
			r = tt.q.read
		}
		if got := s.Predict(tt.value, r); got.Effect != tt.want {
			t.Errorf("%s=%s: Predict = %+v, want %v", tt.name, tt.value, got, tt.want)
		}
	}
}
