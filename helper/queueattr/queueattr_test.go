package queueattr

import (
	"errors"
	"fmt"
	"testing"
)

func TestUnchanged(t *testing.T) {
	other := func(attrs map[string]string) Reader {
		return func(a string) (string, error) {
			v, ok := attrs[a]
			if !ok {
				return "", fmt.Errorf("no %s", a)
			}
			return v, nil
		}
	}
	rot := other(map[string]string{"rotational": "1", "max_hw_sectors_kb": "2560", "logical_block_size": "4096"})
	ssd := other(map[string]string{"rotational": "0", "max_hw_sectors_kb": "32767", "logical_block_size": "512"})
	tests := []struct {
		attr, cur, want string
		r               Reader
		same            bool
	}{
		{"rotational", "1", "1", ssd, true},
		{"rotational", "1", "7", ssd, true}, // any non-zero sets the feature
		{"rotational", "1", "0", ssd, false},
		{"add_random", "0", "0\n", ssd, true},
		{"iostats", "1", "+1", ssd, true}, // kstrtoul takes one '+'
		{"read_ahead_kb", "128", "128", ssd, true},
		{"read_ahead_kb", "128", "130", ssd, true}, // stored in 4 KiB pages
		{"read_ahead_kb", "128", "132", ssd, false},
		{"nr_requests", "4", "1", ssd, true}, // raised to BLKDEV_MIN_RQ
		{"nr_requests", "64", "64", ssd, true},
		{"nr_requests", "64", "128", ssd, false},
		{"nomerges", "1", "5", ssd, true}, // non-zero but 2 means NOXMERGES
		{"nomerges", "2", "2", ssd, true},
		{"nomerges", "0", "2", ssd, false},
		{"rq_affinity", "1", "3", ssd, true}, // ignored by the kernel
		{"rq_affinity", "1", "2", ssd, false},
		{"max_sectors_kb", "1280", "1280", ssd, true},
		{"max_sectors_kb", "2560", "4096", rot, true}, // bounded by max_hw_sectors_kb
		{"max_sectors_kb", "1280", "1282", rot, true}, // rounded down to 4 KiB blocks
		{"max_sectors_kb", "1280", "1284", rot, false},
		{"max_sectors_kb", "1280", "0", ssd, false}, // 0 restores a default only a write shows
		{"wbt_lat_usec", "75000", "-1", rot, true},  // the default on rotational queues
		{"wbt_lat_usec", "2000", "-1", ssd, true},
		{"wbt_lat_usec", "75000", "-1", ssd, false},
		{"wbt_lat_usec", "0", "0", ssd, true},
		{"wbt_lat_usec", "2000", "0", ssd, false},
		{"wbt_lat_usec", "", "0", ssd, false}, // unreadable before wbt is set up
		{"write_cache", "write back", "write back", ssd, true},
		{"write_cache", "write through", "none", ssd, true},
		{"write_cache", "write back", "write through", ssd, false},
		{"iosched/read_expire", "500", "500", ssd, true},
		{"iosched/read_expire", "500", "250", ssd, false},
		{"iosched/read_expire", "252", "250", ssd, true}, // HZ=250 rounds up to a jiffy
		{"iosched/read_expire", "248", "250", ssd, false},
		{"iosched/fifo_batch", "17", "16", ssd, false}, // a count, not jiffies
		{"io_timeout", "30000", "30000", ssd, true},
	}
	for _, tt := range tests {
		s, err := Lookup(tt.attr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Unchanged(tt.cur, tt.want, tt.r)
		if err != nil || got != tt.same {
			t.Errorf("%s: Unchanged(%q, %q) = %v, %v, want %v", tt.attr, tt.cur, tt.want, got, err, tt.same)
		}
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		attr, value string
		ok          bool
	}{
		{"read_ahead_kb", "4096", true},
		{"read_ahead_kb", "-1", false},
		{"read_ahead_kb", "4294967296", false}, // above UINT_MAX
		{"read_ahead_kb", "0x10", false},       // base 10 only
		{"read_ahead_kb", " 1", false},
		{"read_ahead_kb", "", false},
		{"max_sectors_kb", "2", false}, // below BLK_MIN_SEGMENT_SIZE
		{"wbt_lat_usec", "-1", true},
		{"wbt_lat_usec", "-2", false},
		{"write_cache", "write back", true},
		{"write_cache", "writeback", false},
		{"iosched/slice_idle", "8", true},
		{"iosched/slice_idle", "x", false},
	}
	for _, tt := range tests {
		s, err := Lookup(tt.attr)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Check(tt.value); (err == nil) != tt.ok {
			t.Errorf("%s: Check(%q) = %v, want ok %v", tt.attr, tt.value, err, tt.ok)
		} else if err != nil && !errors.Is(err, ErrBadValue) {
			t.Errorf("%s: Check(%q) = %v, not ErrBadValue", tt.attr, tt.value, err)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, bad := range []string{"scheduler", "../dev", "hw_sector_size", "iosched/", "iosched/../x", "iosched/a/b", "Rotational", ""} {
		if _, err := Lookup(bad); !errors.Is(err, ErrUnknown) {
			t.Errorf("Lookup(%q) = %v, want ErrUnknown", bad, err)
		}
	}
	want := []string{"add_random", "discard_max_bytes", "iostats", "iostats_passthrough", "max_sectors_kb", "rotational", "stable_writes", "wbt_lat_usec", "write_cache"}
	if got := FreezingNames(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("FreezingNames() = %q, want %q", got, want)
	}
}
