// Package queueattr knows the writable queue attributes of a block device
// and decides, with each attribute's own parsing in the kernel, whether a
// wanted value differs from the current one. Kernel references are to
// Debian's linux-source-7.3 (7.3.4): block/blk-sysfs.c, block/blk-wbt.c,
// block/blk-settings.c.
package queueattr

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Kind says how the kernel parses and shows an attribute.
type Kind int

const (
	// Uint: queue_var_store(), kstrtoul(page, 10) and at most UINT_MAX.
	Uint Kind = iota
	// Bool: a queue feature flag (QUEUE_SYSFS_FEATURE): any non-zero
	// number sets it, shown as 0 or 1.
	Bool
	// ReadAhead: read_ahead_kb, stored in pages (queue_ra_store).
	ReadAhead
	// MaxSectors: max_sectors_kb, bounded by max_hw_sectors_kb.
	MaxSectors
	// NrRequests: nr_requests, raised to BLKDEV_MIN_RQ.
	NrRequests
	// NoMerges: 2 sets NOMERGES, other non-zero values NOXMERGES.
	NoMerges
	// RqAffinity: 0, 1 or 2; other values change nothing.
	RqAffinity
	// WbtLat: wbt_lat_usec, kstrtos64 and >= -1, -1 meaning the default.
	WbtLat
	// WriteCache: "write back", "write through" or "none".
	WriteCache
	// Tunable: a scheduler's own iosched/NAME attribute, an integer.
	Tunable
)

// Spec describes one attribute.
type Spec struct {
	Name string
	Kind Kind
	// Freezes is true when every write freezes the queue: the
	// queue-limit stores (queue_attr_store() ->
	// queue_limits_commit_update_frozen(), blk-sysfs.c:879-904),
	// wbt_set_lat() (blk-wbt.c:1009) and the elevator switch.
	Freezes bool
}

// specs lists the attributes iosched writes. Read-only ones and the
// scheduler (handled by package sched) are not here.
var specs = map[string]Spec{
	// QUEUE_LIM_RW_ENTRY: written through a frozen limits commit.
	"max_sectors_kb":      {"max_sectors_kb", MaxSectors, true},
	"discard_max_bytes":   {"discard_max_bytes", Uint, true},
	"iostats_passthrough": {"iostats_passthrough", Bool, true},
	"write_cache":         {"write_cache", WriteCache, true},
	"rotational":          {"rotational", Bool, true},
	"iostats":             {"iostats", Bool, true},
	"add_random":          {"add_random", Bool, true},
	"stable_writes":       {"stable_writes", Bool, true},
	"wbt_lat_usec":        {"wbt_lat_usec", WbtLat, true},
	// QUEUE_RW_ENTRY with their own, non-freezing stores.
	"read_ahead_kb": {"read_ahead_kb", ReadAhead, false},
	"nr_requests":   {"nr_requests", NrRequests, false},
	"nomerges":      {"nomerges", NoMerges, false},
	"rq_affinity":   {"rq_affinity", RqAffinity, false},
	"io_timeout":    {"io_timeout", Uint, false},
}

// Tunables lists each kernel scheduler's own attributes under
// queue/iosched/: deadline_attrs (block/mq-deadline.c:785-790),
// bfq_attrs (block/bfq-iosched.c:7576-7585), kyber_sched_attrs
// (block/kyber-iosched.c:879-880). The udev rules name them to know when
// a policy sets one; any other iosched/NAME is still accepted.
var Tunables = map[string][]string{
	"mq-deadline": {"read_expire", "write_expire", "writes_starved", "front_merges", "fifo_batch", "prio_aging_expire"},
	"bfq": {"fifo_expire_sync", "fifo_expire_async", "back_seek_max", "back_seek_penalty", "slice_idle",
		"slice_idle_us", "max_budget", "timeout_sync", "strict_guarantees", "low_latency"},
	"kyber": {"read_lat_nsec", "write_lat_nsec"},
}

// inJiffies are the tunables kept in jiffies and shown in ms:
// deadline's *_expire (block/mq-deadline.c:741-773, SHOW_JIFFIES and
// STORE_JIFFIES) and bfq's timeout_sync (block/bfq-iosched.c:7409,
// __CONV == 1; its other ms tunables are kept in ns, exactly).
var inJiffies = map[string]bool{
	"read_expire": true, "write_expire": true, "prio_aging_expire": true, "timeout_sync": true,
}

// jiffyMaxMS is the longest jiffy of the kernel's HZ choices (HZ=100).
const jiffyMaxMS = 10

// ErrUnknown is returned for attributes iosched does not write.
var ErrUnknown = errors.New("unknown queue attribute")

// ErrBadValue is returned for values the kernel would reject.
var ErrBadValue = errors.New("bad value")

// TunablePrefix marks a scheduler's own attribute, e.g. iosched/read_expire.
const TunablePrefix = "iosched/"

// Lookup returns the spec of a queue attribute name such as
// "wbt_lat_usec" or "iosched/read_expire".
func Lookup(name string) (Spec, error) {
	if s, ok := specs[name]; ok {
		return s, nil
	}
	if t, ok := strings.CutPrefix(name, TunablePrefix); ok && t != "" && isIdent(t) {
		return Spec{Name: name, Kind: Tunable}, nil
	}
	return Spec{}, fmt.Errorf("%w %q (known: %s, iosched/NAME)", ErrUnknown, name, strings.Join(Names(), " "))
}

// Names lists the attributes Lookup knows besides iosched/NAME, sorted.
func Names() []string {
	n := make([]string, 0, len(specs))
	for k := range specs {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// FreezingNames lists the attributes whose every write freezes the queue.
func FreezingNames() []string {
	var n []string
	for _, k := range Names() {
		if specs[k].Freezes {
			n = append(n, k)
		}
	}
	return n
}

func isIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Reader reads other attributes of the same queue, for comparisons that
// depend on them (max_hw_sectors_kb, logical_block_size, rotational).
type Reader func(attr string) (string, error)

// Check validates a wanted value as the kernel's store would, before
// anything is written, so a bad value fails with a clear message instead
// of EINVAL.
func (s Spec) Check(value string) error {
	switch s.Kind {
	case WriteCache:
		if _, ok := writeCache(value); !ok {
			return fmt.Errorf("%s: %w %q: want \"write back\", \"write through\" or \"none\"", s.Name, ErrBadValue, value)
		}
		return nil
	case WbtLat:
		v, err := strconv.ParseInt(value, 10, 64)
		if err != nil || v < -1 {
			return fmt.Errorf("%s: %w %q: want microseconds, 0 to disable or -1 for the default", s.Name, ErrBadValue, value)
		}
		return nil
	case Tunable:
		if _, err := strconv.ParseInt(value, 10, 64); err != nil {
			return fmt.Errorf("%s: %w %q: want an integer", s.Name, ErrBadValue, value)
		}
		return nil
	}
	v, err := kstrtoul(value)
	if err != nil {
		return fmt.Errorf("%s: %w %q: want a decimal number up to %d", s.Name, ErrBadValue, value, uint64(maxUint))
	}
	if s.Kind == MaxSectors && v != 0 && v < minSectorsKB {
		return fmt.Errorf("%s: %w %q: below %d (BLK_MIN_SEGMENT_SIZE)", s.Name, ErrBadValue, value, minSectorsKB)
	}
	return nil
}

const (
	maxUint      = 1<<32 - 1 // UINT_MAX bound of queue_var_store()
	minSectorsKB = 4         // BLK_MIN_SEGMENT_SIZE / 1024 (blk-settings.c:406); 0 means the default
	minRequests  = 4         // BLKDEV_MIN_RQ
)

// kstrtoul mirrors queue_var_store(): base 10, one optional '+', one
// optional trailing newline, at most UINT_MAX.
func kstrtoul(s string) (uint64, error) {
	s = strings.TrimSuffix(s, "\n")
	s = strings.TrimPrefix(s, "+")
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, ErrBadValue
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > maxUint {
		return 0, ErrBadValue
	}
	return v, nil
}

func writeCache(v string) (string, bool) {
	// queue_wc_store() compares prefixes with strncmp (blk-sysfs.c:564-578).
	switch {
	case strings.HasPrefix(v, "write back"):
		return "write back", true
	case strings.HasPrefix(v, "write through"), strings.HasPrefix(v, "none"):
		return "write through", true
	}
	return "", false
}

// Unchanged reports whether writing want would leave the attribute as it
// reads now (current, white space trimmed). When the outcome cannot be
// known without writing, it reports false.
func (s Spec) Unchanged(current, want string, other Reader) (bool, error) {
	if err := s.Check(want); err != nil {
		return false, err
	}
	switch s.Kind {
	case WriteCache:
		w, _ := writeCache(want)
		return current == w, nil
	case WbtLat:
		// wbt_set_lat(): -1 selects wbt_default_latency_nsec(), 75 ms on
		// rotational queues and 2 ms otherwise (blk-wbt.c:799-808, 1018);
		// the show side prints usec, 0 when disabled.
		v, _ := strconv.ParseInt(want, 10, 64)
		if v == -1 {
			rot, err := other("rotational")
			if err != nil {
				return false, nil
			}
			v = 2000
			if rot == "1" {
				v = 75000
			}
		}
		return current == strconv.FormatInt(v, 10), nil
	case Tunable:
		c, err1 := strconv.ParseInt(current, 10, 64)
		w, err2 := strconv.ParseInt(want, 10, 64)
		if err1 != nil || err2 != nil {
			return false, nil
		}
		if inJiffies[strings.TrimPrefix(s.Name, TunablePrefix)] {
			// Stored as msecs_to_jiffies(), shown as jiffies_to_msecs():
			// the value reads back rounded up to a jiffy, at most 10 ms
			// (HZ=100) above what was written.
			return c >= w && c-w < jiffyMaxMS, nil
		}
		return c == w, nil
	}
	cur, err := strconv.ParseUint(current, 10, 64)
	if err != nil {
		return false, nil
	}
	v, _ := kstrtoul(want)
	switch s.Kind {
	case Bool:
		return (cur != 0) == (v != 0), nil
	case ReadAhead:
		// ra_pages = ra_kb >> (PAGE_SHIFT - 10) (queue_ra_store).
		pageKB := uint64(os.Getpagesize() / 1024)
		return cur == v/pageKB*pageKB, nil
	case NrRequests:
		return cur == max(v, minRequests), nil
	case NoMerges:
		if v > 1 && v != 2 {
			v = 1
		}
		return cur == v, nil
	case RqAffinity:
		if v > 2 {
			return true, nil // queue_rq_affinity_store() ignores it
		}
		return cur == v, nil
	case MaxSectors:
		// blk_validate_limits(): max_sectors = min(max_hw_sectors,
		// max_user_sectors), rounded down to the logical block size
		// (blk-settings.c:403-408).
		hw, err := readUint(other, "max_hw_sectors_kb")
		if err != nil {
			return false, nil
		}
		eff := min(v, hw)
		if lbs, err := readUint(other, "logical_block_size"); err == nil && lbs >= 1024 {
			eff = eff / (lbs / 1024) * (lbs / 1024)
		}
		return cur == eff, nil
	}
	return cur == v, nil
}

func readUint(r Reader, attr string) (uint64, error) {
	s, err := r(attr)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(s, 10, 64)
}
