package queueattr

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Reader reads attributes of the same queue, for outcomes that depend on
// its state: a queue attribute by name ("max_hw_sectors_kb", "fua"), one
// of the disk itself as "../NAME" ("../ro", "../mq/0/nr_tags"), or
// LoopReadOnly.
type Reader func(attr string) (string, error)

// LoopReadOnly is what no attribute shows: "1" when a loop device was
// attached read-only (LO_FLAGS_READ_ONLY), "0" when not (package policy
// asks the device).
const LoopReadOnly = "../loop/(LO_FLAGS_READ_ONLY)"

// Effect is what the kernel's store does with a value.
type Effect int

const (
	// Keep: the value is kept and reads back as Outcome.Kept.
	Keep Effect = iota
	// Clamp: the store succeeds but keeps another value (Outcome.Kept).
	Clamp
	// Refuse: the store fails (EINVAL, ERANGE).
	Refuse
	// Ignore: the store succeeds and changes nothing.
	Ignore
	// Unknown: the queue's state in sysfs does not tell; only a write
	// can. Outcome.Kept is what it reads back if the write holds.
	Unknown
	// Wrap: the store succeeds, but the number overflows on its way
	// and reads back as another one.
	Wrap
	// Untold: what reads back depends on what iosched could not find
	// out (the kernel's HZ): refused rather than guessed.
	Untold
)

func (e Effect) String() string {
	return [...]string{"keep", "clamp", "refuse", "ignore", "unknown", "wrap", "untold"}[e]
}

// Outcome is what writing a value would do.
type Outcome struct {
	Effect Effect
	Kept   string // what the attribute reads after the write; "" if not known
	Why    string // the kernel's reason, for Clamp, Refuse, Ignore and Unknown
}

const (
	maxUint        = 1<<32 - 1 // UINT_MAX bound of queue_var_store()
	minSectors     = 8         // BLK_MIN_SEGMENT_SIZE / SECTOR_SIZE (blk-settings.c:blk_validate_limits)
	defSectors     = 8192      // BLK_DEF_MAX_SECTORS_CAP, 4 MiB in sectors (blk.h)
	minRequests    = 4         // BLKDEV_MIN_RQ
	defRequests    = 128       // BLKDEV_DEFAULT_RQ
	maxSchedRq     = 16 * defRequests
	maxWbtUsec     = (1<<64 - 1) / 1000 // wbt_set_lat(): val *= 1000ULL wraps above this
	rotationalUsec = 75000              // wbt_default_latency_nsec(), in usec
	ssdUsec        = 2000
)

// Check validates a value as the kernel's store would, from the value
// alone: what the store refuses, clamps or ignores whatever the queue's
// state is an error wrapping ErrBadValue. Predict with the queue's state
// is the full answer.
func (s Spec) Check(value string) error {
	return s.refusal(value, s.Predict(value, nil))
}

func (s Spec) refusal(value string, o Outcome) error {
	switch o.Effect {
	case Clamp:
		return fmt.Errorf("%s=%q: %w: the kernel would keep %s (%s)", s.Name, value, ErrBadValue, o.Kept, o.Why)
	case Refuse:
		return fmt.Errorf("%s=%q: %w: the kernel refuses it (%s)", s.Name, value, ErrBadValue, o.Why)
	case Ignore:
		return fmt.Errorf("%s=%q: %w: the kernel ignores it (%s)", s.Name, value, ErrBadValue, o.Why)
	case Wrap:
		return fmt.Errorf("%s=%q: %w: it would read back as another number (%s)", s.Name, value, ErrBadValue, o.Why)
	case Untold:
		return fmt.Errorf("%s=%q: %w: iosched cannot tell what the kernel would keep (%s)", s.Name, value, ErrBadValue, o.Why)
	}
	return nil
}

// Refusal is Predict's answer as an error wrapping ErrBadValue when the
// kernel would refuse, clamp or ignore the value on this queue, else nil.
func (s Spec) Refusal(value string, q Reader) error {
	return s.refusal(value, s.Predict(value, q))
}

// Unchanged reports whether writing want would leave the attribute as it
// reads now (current, white space trimmed). A value the kernel would not
// keep is an error wrapping ErrBadValue; when only a write can tell, it
// reports false.
func (s Spec) Unchanged(current, want string, other Reader) (bool, error) {
	q := func(a string) (string, error) {
		if a == s.Name {
			return current, nil
		}
		if other == nil {
			return "", os.ErrNotExist
		}
		return other(a)
	}
	o := s.Predict(want, q)
	if o.Effect == Untold && current == want {
		// What a store would keep cannot be told (a jiffy value on an
		// unknown HZ), but no store is needed: the file shows the value.
		return true, nil
	}
	if err := s.refusal(want, o); err != nil {
		return false, err
	}
	return o.Kept != "" && s.Same(current, o.Kept), nil
}

// Same reports whether an attribute reading current holds kept. Values
// kept in jiffies are predicted on the kernel's own HZ, so equal is the
// whole answer for them too.
func (s Spec) Same(current, kept string) bool { return current == kept }

// Predict models the attribute's store in the kernel: what writing want
// does on the queue q reads. q may be nil: what depends on the queue's
// state is then Unknown.
func (s Spec) Predict(want string, q Reader) Outcome {
	read := func(a string) (string, bool) {
		if q == nil {
			return "", false
		}
		v, err := q(a)
		return strings.TrimSpace(v), err == nil
	}
	switch s.Kind {
	case WbtLat:
		return predictWbt(want, read)
	case WriteCache:
		return predictWriteCache(want, read)
	case Tunable:
		return predictTunable(strings.TrimPrefix(s.Name, TunablePrefix), want, tickOf(q))
	case IOTimeout:
		// kstrtou32(page, 10), and 0 is refused.
		v, ok := kstrtoul(want, maxUint)
		switch {
		case !ok:
			return refuse("queue_io_timeout_store: kstrtou32, a decimal number up to %d", uint64(maxUint))
		case v == 0:
			return refuse("queue_io_timeout_store: 0 is EINVAL")
		case v > math.MaxInt32:
			// __msecs_to_jiffies() takes a negative int as "forever":
			// MAX_JIFFY_OFFSET, cut to the unsigned int rq_timeout.
			return Outcome{Effect: Wrap, Why: fmt.Sprintf("queue_io_timeout_store: above %d ms, msecs_to_jiffies gives MAX_JIFFY_OFFSET, cut to an unsigned int", math.MaxInt32)}
		}
		// The unsigned int q->rq_timeout, shown by queue_io_timeout_show
		// with %u.
		return predictJiffies(int64(v), v, false, "blk-sysfs.c:queue_io_timeout_store", tickOf(q))
	}
	v, ok := kstrtoul(want, maxUint)
	if !ok {
		return refuse("blk-sysfs.c:queue_var_store: kstrtoul, a decimal number up to %d", uint64(maxUint))
	}
	switch s.Kind {
	case Feature, Flag:
		if v > 1 {
			store := "queue_feature_store"
			if s.Kind == Flag {
				store = "queue_iostats_passthrough_store"
			}
			return Outcome{Clamp, "1", "blk-sysfs.c:" + store + ": any non-zero value sets the flag, shown as 1"}
		}
		return keep(v)
	case ReadAhead:
		// ra_pages = ra_kb >> (PAGE_SHIFT - 10) (queue_ra_store).
		pageKB := uint64(os.Getpagesize() / 1024)
		if v%pageKB != 0 {
			return Outcome{Clamp, strconv.FormatUint(v/pageKB*pageKB, 10),
				fmt.Sprintf("blk-sysfs.c:queue_ra_store: kept in whole %d KiB pages", pageKB)}
		}
		return keep(v)
	case NoMerges:
		if v > 2 {
			return Outcome{Clamp, "1", "blk-sysfs.c:queue_nomerges_store: 2 is nomerges, other non-zero values 1"}
		}
		return keep(v)
	case RqAffinity:
		if v > 2 {
			return Outcome{Effect: Ignore, Why: "blk-sysfs.c:queue_rq_affinity_store: only 0, 1 and 2 change anything"}
		}
		return keep(v)
	case MaxSectors:
		return predictMaxSectors(v, read)
	case DiscardMax:
		return predictDiscard(v, read)
	case NrRequests:
		return predictNrRequests(v, read)
	}
	return keep(v)
}

func keep(v uint64) Outcome { return Outcome{Effect: Keep, Kept: strconv.FormatUint(v, 10)} }

func refuse(format string, a ...any) Outcome {
	return Outcome{Effect: Refuse, Why: fmt.Sprintf(format, a...)}
}

func unknown(kept, why string) Outcome { return Outcome{Unknown, kept, why} }

// kstrtoul mirrors lib/kstrtox.c:kstrtoull in base 10 as the queue
// stores call it: one optional '+', one optional trailing newline, and
// at most limit.
func kstrtoul(s string, limit uint64) (uint64, bool) {
	s = strings.TrimSuffix(s, "\n")
	s = strings.TrimPrefix(s, "+")
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > limit {
		return 0, false
	}
	return v, true
}

func readUint(read func(string) (string, bool), attr string) (uint64, bool) {
	s, ok := read(attr)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// predictMaxSectors: queue_max_sectors_store() keeps max_user_sectors =
// kb << 1 in an unsigned int; blk_validate_limits() refuses a cap under
// 8 sectors, takes min(max_hw_sectors, cap) or, for 0, the default, and
// rounds down to the logical block size.
func predictMaxSectors(kb uint64, read func(string) (string, bool)) Outcome {
	user := uint64(uint32(kb << 1))
	if user != 0 && user < minSectors {
		return refuse("blk-settings.c:blk_validate_limits: a cap under %d KiB is EINVAL", minSectors/2)
	}
	hwKB, ok1 := readUint(read, "max_hw_sectors_kb")
	lbs, ok2 := readUint(read, "logical_block_size")
	if !ok1 || !ok2 || lbs < 512 {
		return unknown("", "max_hw_sectors_kb or logical_block_size unreadable")
	}
	hw := hwKB * 2
	var sectors uint64
	switch {
	case user != 0:
		sectors = min(hw, user)
	default:
		sectors = min(hw, defSectors)
		opt, _ := readUint(read, "optimal_io_size")
		iomin, _ := readUint(read, "minimum_io_size")
		if opt > defSectors*512 {
			sectors = min(hw, opt/512)
		} else if iomin > defSectors*512 {
			sectors = min(hw, iomin/512)
		}
	}
	lbsSectors := lbs / 512
	sectors = sectors / lbsSectors * lbsSectors
	got := strconv.FormatUint(sectors/2, 10)
	switch {
	case kb == 0:
		return Outcome{Effect: Keep, Kept: got} // 0 asks for the default: it reads back as that
	case user == 0:
		return Outcome{Clamp, got, "queue_max_sectors_store: kb << 1 overflows the unsigned int cap to 0, the default"}
	case sectors/2 != kb:
		return Outcome{Clamp, got, fmt.Sprintf("blk-settings.c:blk_validate_limits: at most max_hw_sectors_kb %d, in whole %d-byte blocks", hwKB, lbs)}
	}
	return Outcome{Effect: Keep, Kept: got}
}

// predictDiscard: queue_max_discard_sectors_store() refuses a value that
// is not a multiple of discard_granularity (with no discard support the
// granularity is 0 and only 0 passes the mask); the queue shows
// min(max_hw_discard_sectors, the cap) (blk_validate_limits).
func predictDiscard(v uint64, read func(string) (string, bool)) Outcome {
	g, ok1 := readUint(read, "discard_granularity")
	hw, ok2 := readUint(read, "discard_max_hw_bytes")
	if !ok1 || !ok2 {
		return unknown("", "discard_granularity or discard_max_hw_bytes unreadable")
	}
	if v&uint64(uint32(g-1)) != 0 {
		if g == 0 {
			return refuse("queue_max_discard_sectors_store: the device has no discard support (discard_granularity 0): only 0")
		}
		return refuse("queue_max_discard_sectors_store: not a multiple of discard_granularity %d", g)
	}
	kept := min(hw, v>>9<<9)
	if kept != v {
		return Outcome{Clamp, strconv.FormatUint(kept, 10), fmt.Sprintf("blk-settings.c:blk_validate_limits: at most discard_max_hw_bytes %d", hw)}
	}
	return keep(v)
}

// predictNrRequests: queue_requests_store() returns early for the value
// it has, raises the rest to BLKDEV_MIN_RQ and refuses values at or
// under the reserved tags, above MAX_SCHED_RQ with a scheduler and above
// the tag set's queue depth without one.
func predictNrRequests(v uint64, read func(string) (string, bool)) Outcome {
	if cur, ok := readUint(read, "nr_requests"); ok && cur == v {
		return keep(v)
	}
	if v < minRequests {
		return Outcome{Clamp, strconv.Itoa(minRequests), "blk-sysfs.c:queue_requests_store: raised to BLKDEV_MIN_RQ"}
	}
	line, ok := read("scheduler")
	if !ok {
		return unknown(strconv.FormatUint(v, 10), "queue/scheduler unreadable")
	}
	elevator := !strings.Contains(line, "[none]") && line != "none"
	if reserved, ok := readUint(read, "../mq/0/nr_reserved_tags"); ok && v <= reserved {
		return refuse("blk-sysfs.c:queue_requests_store: at most the %d reserved tags", reserved)
	}
	if elevator {
		if v > maxSchedRq {
			return refuse("blk-sysfs.c:queue_requests_store: above MAX_SCHED_RQ %d with a scheduler", maxSchedRq)
		}
		return keep(v)
	}
	depth, ok := readUint(read, "../mq/0/nr_tags")
	if !ok {
		return unknown(strconv.FormatUint(v, 10), "the tag set's depth (mq/0/nr_tags) unreadable")
	}
	if v > depth {
		return refuse("blk-sysfs.c:queue_requests_store: above the queue depth %d without a scheduler", depth)
	}
	return keep(v)
}

// predictWbt: queue_wb_lat_store() takes kstrtos64 and >= -1; -1 is
// wbt_default_latency_nsec(), 75 ms on rotational queues and 2 ms
// otherwise; wbt_set_lat() keeps val * 1000 in a u64, shown divided by
// 1000, so values above maxWbtUsec wrap.
func predictWbt(want string, read func(string) (string, bool)) Outcome {
	v, err := strconv.ParseInt(strings.TrimSuffix(want, "\n"), 10, 64)
	switch {
	case err != nil:
		return refuse("blk-sysfs.c:queue_wb_lat_store: kstrtos64, microseconds, 0 to disable or -1 for the default")
	case v < -1:
		return refuse("blk-sysfs.c:queue_wb_lat_store: below -1 is EINVAL")
	case v == -1:
		rot, ok := read("rotational")
		if !ok {
			return unknown("", "-1 is the default latency, and rotational is unreadable")
		}
		if rot == "1" {
			return keep(rotationalUsec)
		}
		return keep(ssdUsec)
	case uint64(v) > maxWbtUsec:
		return Outcome{Clamp, strconv.FormatUint(uint64(v)*1000/1000, 10), "blk-wbt.c:wbt_set_lat: val * 1000 overflows 64 bits"}
	}
	return keep(uint64(v))
}

// predictWriteCache: queue_wc_store() compares prefixes with strncmp and
// only sets or clears BLK_FLAG_WRITE_CACHE_DISABLED; the queue writes
// back only when the device also has BLK_FEAT_WRITE_CACHE
// (blkdev.h:blk_queue_write_cache), which no attribute shows. What does:
// fua is 1 only with a write cache (blk-settings.c:blk_validate_limits
// clears BLK_FEAT_FUA without one), a read-only loop device never has
// one (loop.c:loop_update_limits), and virtio-blk shows the device's own
// mode as the disk's cache_type (virtio_blk.c:cache_type_show).
func predictWriteCache(want string, read func(string) (string, bool)) Outcome {
	switch {
	case strings.HasPrefix(want, "write through"), strings.HasPrefix(want, "none"):
		return Outcome{Effect: Keep, Kept: "write through"}
	case !strings.HasPrefix(want, "write back"):
		return refuse(`blk-sysfs.c:queue_wc_store: "write back", "write through" or "none"`)
	}
	if cur, ok := read("write_cache"); ok && cur == "write back" {
		return Outcome{Effect: Keep, Kept: "write back"}
	}
	if fua, ok := read("fua"); ok && fua == "1" {
		return Outcome{Effect: Keep, Kept: "write back"}
	}
	if ro, ok := read("../ro"); ok && ro == "1" {
		if _, loop := read("../loop/backing_file"); loop {
			// ro also reads 1 after BLKROSET (blockdev --setro) on a loop
			// device attached writable, which keeps its cache.
			switch lro, _ := read(LoopReadOnly); lro {
			case "1":
				return Outcome{Effect: Ignore, Why: "loop.c:loop_update_limits: a loop device attached read-only has no volatile write cache"}
			case "":
				return unknown("write back", "a read-only loop device: only its LOOP_GET_STATUS64 flags tell whether it was attached read-only")
			}
		}
	}
	if ct, ok := read("../cache_type"); ok && ct == "write through" {
		return Outcome{Effect: Ignore, Why: "virtio_blk.c:cache_type_show: the device has no volatile write cache"}
	}
	return unknown("write back", "only a write tells whether the device has a volatile write cache (queue/fua reads 0)")
}

// predictTunable models the scheduler stores listed in tunables; a name
// not listed is taken as any integer the scheduler keeps as written.
func predictTunable(name, want string, hz tick) Outcome {
	s := strings.TrimSuffix(want, "\n")
	t, known := tunables[name]
	if !known {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return refuse("want a decimal integer")
		}
		return Outcome{Effect: Keep, Kept: strconv.FormatInt(v, 10)}
	}
	var asked int64 // the value as parsed, before the store's clamp
	var v uint64    // the value the store keeps, after its clamp
	switch t.parse {
	case parseUllong:
		v, ok := kstrtoul(s, 1<<64-1)
		if !ok {
			return refuse("%s: kstrtoull, a decimal number", t.store)
		}
		return keep(v)
	case parseUlong:
		u, ok := kstrtoul(s, 1<<64-1)
		if !ok {
			return refuse("%s: kstrtoul, a decimal number", t.store)
		}
		v = uint64(clamp(u, t))
		asked = int64(min(u, math.MaxInt64))
	default:
		// kstrtoint(page, 0): plain decimals only, see parseInt.
		digits := strings.TrimLeft(s, "+-")
		if digits == "" || len(digits) > 1 && digits[0] == '0' || len(s)-len(digits) > 1 {
			return refuse("%s: want a plain decimal integer (kstrtoint base 0 reads a leading 0 as octal)", t.store)
		}
		i, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return refuse("%s: kstrtoint, an int (-2147483648..2147483647)", t.store)
		}
		asked = i
		kept := min(max(i, t.min), t.max)
		if t.unit == exact {
			if kept != i {
				return Outcome{Clamp, strconv.FormatInt(kept, 10), fmt.Sprintf("%s: clamped to %d..%d", t.store, t.min, t.max)}
			}
			return Outcome{Effect: Keep, Kept: strconv.FormatInt(i, 10)}
		}
		v = uint64(kept) // the jiffies stores' min is 0
	}
	switch t.unit {
	case jiffiesInt, jiffiesUint:
		return predictJiffies(asked, v, t.unit == jiffiesInt, t.store, hz)
	case nsU32FromMs, nsU32FromUs:
		per := uint64(1_000_000)
		if t.unit == nsU32FromUs {
			per = 1000
		}
		if ns := v * per; ns > math.MaxUint32 {
			return Outcome{Effect: Wrap, Why: fmt.Sprintf("%s: kept as %d ns in the u32 bfq_slice_idle: above %d it wraps and reads back as %d",
				t.store, ns, uint64(math.MaxUint32)/per, uint64(uint32(ns))/per)}
		}
	}
	if int64(v) != asked || asked < 0 {
		return Outcome{Clamp, strconv.FormatUint(v, 10), fmt.Sprintf("%s: clamped to %d..%d", t.store, t.min, t.max)}
	}
	return keep(v)
}

// clamp is the store's clamp of an unsigned long to t's bounds.
func clamp(v uint64, t tunable) int64 {
	if v < uint64(t.min) {
		return t.min
	}
	if v > uint64(t.max) {
		return t.max
	}
	return int64(v)
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

// SwitchResets reports whether switching the elevator from one scheduler
// to another resets the attribute name, and to what ("" when only the
// switch can tell). elevator.c:elevator_switch sets nr_requests to the
// tag set's depth for "none"; blk-mq-sched.c:blk_mq_init_sched sets it to
// blk_mq_default_nr_requests(), 2 * min(depth, BLKDEV_DEFAULT_RQ), for a
// scheduler. bfq turns writeback throttling off while it runs
// (bfq-iosched.c:bfq_init_queue -> wbt_disable_default) and back on when
// it goes (bfq_exit_queue -> wbt_enable_default). The tunables under
// iosched/ are replaced by the new scheduler's.
func SwitchResets(name, from, to string, q Reader) (after string, resets bool) {
	if from == to {
		return "", false
	}
	switch {
	case name == "nr_requests":
		if q == nil {
			return "", true
		}
		d, err := q("../mq/0/nr_tags")
		depth, err2 := strconv.ParseUint(strings.TrimSpace(d), 10, 64)
		if err != nil || err2 != nil {
			return "", true
		}
		if to == "none" {
			return strconv.FormatUint(depth, 10), true
		}
		return strconv.FormatUint(2*min(depth, defRequests), 10), true
	case name == "wbt_lat_usec":
		return "", from == "bfq" || to == "bfq"
	case strings.HasPrefix(name, TunablePrefix):
		return "", true
	}
	return "", false
}
