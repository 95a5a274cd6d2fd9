package queueattr

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Kernel is a kernel version as major.minor, the granularity at which
// the block layer's stores changed.
type Kernel struct{ Major, Minor int }

// ParseKernel reads the version at the start of a release string such as
// uname -r prints ("6.12.117-amd64", "7.3.4+bpo-amd64").
func ParseKernel(release string) (Kernel, error) {
	maj, rest, ok := strings.Cut(release, ".")
	if !ok {
		return Kernel{}, fmt.Errorf("kernel release %q: want MAJOR.MINOR", release)
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(rest[:end])
	if err1 != nil || err2 != nil || a < 0 {
		return Kernel{}, fmt.Errorf("kernel release %q: want MAJOR.MINOR", release)
	}
	return Kernel{a, b}, nil
}

func (k Kernel) String() string { return fmt.Sprintf("%d.%d", k.Major, k.Minor) }

// Before reports whether k is an older version than o.
func (k Kernel) Before(o Kernel) bool {
	return k.Major < o.Major || k.Major == o.Major && k.Minor < o.Minor
}

// FreezeRange is the kernels From up to, not including, Until on which an
// unchanged write of an attribute freezes the queue; a zero Until means
// every later kernel too.
type FreezeRange struct{ From, Until Kernel }

// Contains reports whether k is in the range.
func (r FreezeRange) Contains(k Kernel) bool {
	return !k.Before(r.From) && (r.Until == Kernel{} || k.Before(r.Until))
}

func (r FreezeRange) String() string {
	if r.Until == (Kernel{}) {
		return r.From.String() + " and later"
	}
	if r.Until.Minor == 0 {
		return r.From.String() + " to before " + r.Until.String()
	}
	last := Kernel{r.Until.Major, r.Until.Minor - 1}
	if last == r.From {
		return r.From.String() + " only"
	}
	return r.From.String() + " to " + last.String()
}

// oldest is the oldest kernel whose stores were read and measured
// (6.12.117, Debian 13's and RHEL 10's series).
var oldest = Kernel{6, 12}

// Where an unchanged write stopped freezing, upstream:
//   - commit af2814149883 "block: freeze the queue in queue_attr_store"
//     (6.11) froze the queue around every store that is not a queue
//     limit, so 6.12 freezes for read_ahead_kb, nomerges, nr_requests,
//     rq_affinity and io_timeout too. elv_attr_store() (iosched/NAME)
//     never froze.
//   - commit b07a889e8335 "block: move q->sysfs_lock and queue-freeze
//     under show/store method" (6.15) moved the freeze into the stores
//     that kept it, those five among them.
//   - commit 935a20d1bebf "block: Remove queue freezing from several
//     sysfs store callbacks" (Bart Van Assche; Cc stable, Fixes:
//     af2814149883; mainline 6.19, and in the 6.18 stable series)
//     dropped it from io_timeout, nomerges, read_ahead_kb and
//     rq_affinity, and an unchanged nr_requests returns before its freeze
//     (blk-sysfs.c:queue_requests_store). On 6.18.44 `iosched probe
//     --runs 20` (docs/kernels.md) measured read_ahead_kb at 0.001 ms
//     against 16 ms for the limits and wbt_lat_usec, so the range ends
//     before 6.18 (an early 6.18.y without the backport still froze). 6.15 to 6.17 are taken as freezing: the
//     conservative answer. kernel-patches/README.md has the whole chain.
//   - queue limits (queue_limits_commit_update_frozen), wbt_lat_usec
//     (blk-wbt.c:wbt_set_lat freezes before it compares) and the
//     scheduler (elevator.c:elevator_change freezes before
//     elevator_match) freeze on every kernel up to 7.3.
//
// kernels.tsv has the kernels test/check bench/kernels measured; the tests hold these
// ranges to its freeze counts.
var (
	everyKernel   = []FreezeRange{{From: oldest}}
	untilStoreFix = []FreezeRange{{From: oldest, Until: Kernel{6, 18}}}
)

// freezeUntilFix are the non-limit attributes whose unchanged writes
// froze until the fix above.
var freezeUntilFix = map[string]bool{
	"read_ahead_kb": true, "nomerges": true, "rq_affinity": true, "io_timeout": true, "nr_requests": true,
}

// FreezeRanges lists the kernels on which an unchanged write of the
// setting name ("scheduler", "rotational", "iosched/fifo_batch", ...)
// freezes the queue; nil when it freezes on none of them (the scheduler
// tunables, and names iosched does not know).
func FreezeRanges(name string) []FreezeRange {
	if name == Scheduler {
		return slices.Clone(everyKernel)
	}
	s, ok := specs[name]
	switch {
	case !ok:
		return nil
	case s.Freezes:
		return slices.Clone(everyKernel)
	case freezeUntilFix[name]:
		return slices.Clone(untilStoreFix)
	}
	return nil
}
