package queueattr

import "math"

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
	exact   unit = iota // kept as written (ns conversions multiply exactly)
	jiffies             // msecs_to_jiffies(), shown by jiffies_to_msecs(): rounded up to a jiffy
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
	"read_expire":       {"mq-deadline", parseInt, 0, math.MaxInt32, jiffies, "mq-deadline.c:deadline_read_expire_store"},
	"write_expire":      {"mq-deadline", parseInt, 0, math.MaxInt32, jiffies, "mq-deadline.c:deadline_write_expire_store"},
	"prio_aging_expire": {"mq-deadline", parseInt, 0, math.MaxInt32, jiffies, "mq-deadline.c:deadline_prio_aging_expire_store"},
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
	"slice_idle":        {"bfq", parseUlong, 0, math.MaxInt32, exact, "bfq-iosched.c:bfq_slice_idle_store"},
	"slice_idle_us":     {"bfq", parseUlong, 0, math.MaxUint32, exact, "bfq-iosched.c:bfq_slice_idle_us_store"},
	// 0 means "computed" and reads back 0 (bfq_user_max_budget).
	"max_budget":        {"bfq", parseUlong, 0, math.MaxInt32, exact, "bfq-iosched.c:bfq_max_budget_store"},
	"timeout_sync":      {"bfq", parseUlong, 1, math.MaxInt32, jiffies, "bfq-iosched.c:bfq_timeout_sync_store"},
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
