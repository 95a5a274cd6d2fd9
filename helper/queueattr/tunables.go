package queueattr

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/iosched/iosched/helper/jiffies"
)

// parse says which kstrto*() a scheduler's store uses.
type parse int

const (
	// kstrtoint(page, 0): mq-deadline (mq-deadline.c:STORE_FUNCTION).
	// Base 0 would read "010" as 8, so iosched takes plain decimals only.
	parseInt parse = iota
	// kstrtoul(page, 10): bfq (bfq-iosched.c:bfq_var_store).
	parseUlong
	// kstrtoull(page, 10): kyber (kyber-iosched.c:KYBER_LAT_SHOW_STORE).
	parseUllong
)

// unit says how a tunable is kept, which decides what reads back.
type unit int

const (
	exact unit = iota // kept as written (u64 ns conversions multiply exactly)
	// msecs_to_jiffies() into an int, shown by jiffies_to_msecs() with
	// %d: rounded up to a whole jiffy, negative past INT_MAX
	// (mq-deadline.c:STORE_JIFFIES, SHOW_JIFFIES).
	jiffiesInt
	// msecs_to_jiffies() into an unsigned int, shown with %u
	// (bfq-iosched.c:bfq_timeout_sync_store, SHOW_FUNCTION __CONV 1).
	jiffiesUint
	// ms * NSEC_PER_MSEC kept in the u32 bfqd->bfq_slice_idle
	// (bfq-iosched.h), shown divided back: wraps above 4294 ms.
	nsU32FromMs
	// us * NSEC_PER_USEC in that same u32: wraps above 4294967 us.
	nsU32FromUs
)

// tunable is one scheduler attribute's store: the range it clamps to.
type tunable struct {
	sched    string
	parse    parse
	min, max int64
	unit     unit
	store    string // the kernel function, for messages
}

// tunables are the stores of deadline_attrs (mq-deadline.c:771-776, and
// async_depth of kernels before 7.3),
// bfq_attrs (bfq-iosched.c:7448-7562) and kyber_sched_attrs
// (kyber-iosched.c:858-875). No name belongs to two schedulers.
var tunables = map[string]tunable{
	"read_expire":       {"mq-deadline", parseInt, 0, math.MaxInt32, jiffiesInt, "mq-deadline.c:deadline_read_expire_store"},
	"write_expire":      {"mq-deadline", parseInt, 0, math.MaxInt32, jiffiesInt, "mq-deadline.c:deadline_write_expire_store"},
	"prio_aging_expire": {"mq-deadline", parseInt, 0, math.MaxInt32, jiffiesInt, "mq-deadline.c:deadline_prio_aging_expire_store"},
	"writes_starved":    {"mq-deadline", parseInt, math.MinInt32, math.MaxInt32, exact, "mq-deadline.c:deadline_writes_starved_store"},
	"front_merges":      {"mq-deadline", parseInt, 0, 1, exact, "mq-deadline.c:deadline_front_merges_store"},
	"fifo_batch":        {"mq-deadline", parseInt, 0, math.MaxInt32, exact, "mq-deadline.c:deadline_fifo_batch_store"},
	// 6.18's mq-deadline.c:deadline_async_depth_store (measured on
	// 6.18.44: 0 reads back 1, 2147483648 is ERANGE); a change of
	// nr_requests resets it. 7.3 has queue/async_depth instead.
	"async_depth": {"mq-deadline", parseInt, 1, math.MaxInt32, exact, "mq-deadline.c:deadline_async_depth_store"},

	"fifo_expire_sync":  {"bfq", parseUlong, 1, math.MaxInt32, exact, "bfq-iosched.c:bfq_fifo_expire_sync_store"},
	"fifo_expire_async": {"bfq", parseUlong, 1, math.MaxInt32, exact, "bfq-iosched.c:bfq_fifo_expire_async_store"},
	"back_seek_max":     {"bfq", parseUlong, 0, math.MaxInt32, exact, "bfq-iosched.c:bfq_back_seek_max_store"},
	"back_seek_penalty": {"bfq", parseUlong, 1, math.MaxInt32, exact, "bfq-iosched.c:bfq_back_seek_penalty_store"},
	"slice_idle":        {"bfq", parseUlong, 0, math.MaxInt32, nsU32FromMs, "bfq-iosched.c:bfq_slice_idle_store"},
	"slice_idle_us":     {"bfq", parseUlong, 0, math.MaxUint32, nsU32FromUs, "bfq-iosched.c:bfq_slice_idle_us_store"},
	// 0 means "computed" and reads back 0 (bfq_user_max_budget).
	"max_budget":        {"bfq", parseUlong, 0, math.MaxInt32, exact, "bfq-iosched.c:bfq_max_budget_store"},
	"timeout_sync":      {"bfq", parseUlong, 1, math.MaxInt32, jiffiesUint, "bfq-iosched.c:bfq_timeout_sync_store"},
	"strict_guarantees": {"bfq", parseUlong, 0, 1, exact, "bfq-iosched.c:bfq_strict_guarantees_store"},
	"low_latency":       {"bfq", parseUlong, 0, 1, exact, "bfq-iosched.c:bfq_low_latency_store"},

	// Stored as u64 and shown with %llu: every value reads back.
	"read_lat_nsec":  {"kyber", parseUllong, 0, math.MaxInt64, exact, "kyber-iosched.c:kyber_read_lat_store"},
	"write_lat_nsec": {"kyber", parseUllong, 0, math.MaxInt64, exact, "kyber-iosched.c:kyber_write_lat_store"},
}

// Tunables lists each kernel scheduler's own attributes under
// queue/iosched/ on the kernels iosched read, sorted: the ranges and the
// names of the refusal message when the running kernel shows none
// (package policy reads the disk's queue/iosched/ first). The udev rules
// name them to know when a policy sets one; any other iosched/NAME is
// still accepted.
var Tunables = func() map[string][]string {
	m := map[string][]string{}
	for _, n := range sortedKeys(tunables) {
		t := tunables[n]
		m[t.sched] = append(m[t.sched], n)
	}
	return m
}()

// KernelHZ is what no queue attribute shows: the running kernel's HZ, as
// "HZ SOURCE" ("250 /proc/config.gz"); a Reader that cannot tell
// returns an error saying why (package policy answers it from package
// jiffies). Values kept in jiffies depend on it.
const KernelHZ = "(CONFIG_HZ)"

// tick is what a Reader says of the kernel's HZ.
type tick struct {
	hz     jiffies.HZ
	source string
	why    string // when hz is 0 and the reader was asked: why not known
	asked  bool   // a reader was there to ask (Predict with a queue)
}

func tickOf(q Reader) tick {
	if q == nil {
		return tick{}
	}
	v, err := q(KernelHZ)
	if err != nil {
		return tick{asked: true, why: err.Error()}
	}
	n, src, _ := strings.Cut(strings.TrimSpace(v), " ")
	hz, err := strconv.ParseUint(n, 10, 32)
	if err != nil || !jiffies.HZ(hz).Exact() {
		return tick{asked: true, why: fmt.Sprintf("HZ=%s (%s) is not one whose jiffies iosched models (a divisor of 1000)", n, src)}
	}
	return tick{hz: jiffies.HZ(hz), source: src, asked: true}
}

// predictJiffies is a store that keeps v ms (asked, after the store's
// clamp) through msecs_to_jiffies() and shows jiffies_to_msecs(), as an
// int when signed: exact on the kernel's HZ; with the HZ unknown, only
// a multiple of jiffies.Every reads back as written on every HZ, and
// anything else is Unknown without a queue (Check, from the value
// alone) and refused with one (the fallback refuses, never guesses).
func predictJiffies(asked int64, v uint64, signed bool, store string, t tick) Outcome {
	if t.hz == 0 {
		if uint64(asked) == v && v%jiffies.Every == 0 {
			return keep(v)
		}
		if !t.asked {
			return unknown("", store+": kept in jiffies: what reads back depends on the kernel's HZ")
		}
		return Outcome{Effect: Untold, Why: fmt.Sprintf("%s: kept in jiffies, and %s: only a multiple of %d ms reads back as written on every HZ", store, t.why, jiffies.Every)}
	}
	got := t.hz.RoundTrip(v)
	if signed && got > math.MaxInt32 {
		return Outcome{Effect: Wrap, Why: fmt.Sprintf("%s: kept in jiffies of %d ms (HZ=%d, %s), shown as an int: %d ms reads back negative, as %d",
			store, t.hz.Msecs(), t.hz, t.source, v, int32(got))}
	}
	if int64(got) == asked {
		return keep(uint64(got))
	}
	why := fmt.Sprintf("%s: kept in whole jiffies of %d ms (HZ=%d, %s)", store, t.hz.Msecs(), t.hz, t.source)
	if asked < 0 || uint64(asked) != v {
		why = fmt.Sprintf("%s: clamped to %d, then kept in whole jiffies of %d ms (HZ=%d, %s)", store, v, t.hz.Msecs(), t.hz, t.source)
	}
	return Outcome{Clamp, strconv.FormatUint(uint64(got), 10), why}
}
