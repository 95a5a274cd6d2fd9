// Package queueattr is the one home of what iosched knows about each
// setting of a block device's queue: its udev property, whether a write
// freezes the queue and on which kernels, and, from each attribute's own
// store in the kernel, what a write of a value would leave behind. Kernel
// references are file:function in Debian's linux-source-7.3 (7.3.4):
// block/blk-sysfs.c, blk-settings.c, blk-wbt.c, elevator.c, mq-deadline.c,
// bfq-iosched.c, kyber-iosched.c.
package queueattr

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Kind says how the kernel parses, keeps and shows an attribute.
type Kind int

const (
	// Feature: a queue feature flag (blk-sysfs.c:queue_feature_store):
	// any non-zero number sets it, shown as 0 or 1.
	Feature Kind = iota
	// Flag: iostats_passthrough, a limits flag with the same parsing.
	Flag
	// ReadAhead: read_ahead_kb, kept in pages (queue_ra_store).
	ReadAhead
	// MaxSectors: max_sectors_kb, a user cap under max_hw_sectors_kb
	// (queue_max_sectors_store, blk-settings.c:blk_validate_limits).
	MaxSectors
	// DiscardMax: discard_max_bytes, a multiple of discard_granularity
	// (queue_max_discard_sectors_store).
	DiscardMax
	// NrRequests: nr_requests (queue_requests_store).
	NrRequests
	// NoMerges: 0, 1 or 2 (queue_nomerges_store).
	NoMerges
	// RqAffinity: 0, 1 or 2; other values change nothing
	// (queue_rq_affinity_store).
	RqAffinity
	// IOTimeout: io_timeout in ms, kept in jiffies (queue_io_timeout_store).
	IOTimeout
	// WbtLat: wbt_lat_usec (queue_wb_lat_store, blk-wbt.c:wbt_set_lat).
	WbtLat
	// WriteCache: "write back" or "write through" (queue_wc_store).
	WriteCache
	// Tunable: a scheduler's own iosched/NAME attribute (tunables.go).
	Tunable
)

// Spec describes one attribute.
type Spec struct {
	Name string
	Kind Kind
	// Freezes is true when every write freezes the queue on every
	// kernel iosched knows: the queue-limit stores
	// (blk-sysfs.c:queue_attr_store -> queue_limits_commit_update_frozen)
	// and wbt_set_lat(), which freezes before it compares. FreezeRanges
	// has the per-kernel answer for every setting.
	Freezes bool
}

// specs lists the attributes iosched writes. Read-only ones and the
// scheduler (matched by package sched) are not here.
var specs = map[string]Spec{
	// QUEUE_LIM_RW_ENTRY: written through a frozen limits commit.
	"max_sectors_kb":      {"max_sectors_kb", MaxSectors, true},
	"discard_max_bytes":   {"discard_max_bytes", DiscardMax, true},
	"iostats_passthrough": {"iostats_passthrough", Flag, true},
	"write_cache":         {"write_cache", WriteCache, true},
	"rotational":          {"rotational", Feature, true},
	"iostats":             {"iostats", Feature, true},
	"add_random":          {"add_random", Feature, true},
	"stable_writes":       {"stable_writes", Feature, true},
	"wbt_lat_usec":        {"wbt_lat_usec", WbtLat, true},
	// QUEUE_RW_ENTRY with their own stores.
	"read_ahead_kb": {"read_ahead_kb", ReadAhead, false},
	"nr_requests":   {"nr_requests", NrRequests, false},
	"nomerges":      {"nomerges", NoMerges, false},
	"rq_affinity":   {"rq_affinity", RqAffinity, false},
	"io_timeout":    {"io_timeout", IOTimeout, false},
}

// ErrUnknown is returned for attributes iosched does not write.
var ErrUnknown = errors.New("unknown queue attribute")

// ErrBadValue is returned for values the kernel would refuse, clamp or
// ignore: iosched refuses them before anything is opened for writing.
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

// FreezingNames lists the settings whose every write freezes the queue on
// every kernel iosched knows: the scheduler first, then the attributes
// with Freezes, sorted.
func FreezingNames() []string {
	n := []string{Scheduler}
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
