package jiffies

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFind(t *testing.T) {
	type res struct {
		HZ     HZ
		Source string
		Err    bool
	}
	tests := []struct {
		root string
		want res
	}{
		{"testdata/gz", res{250, "/proc/config.gz", false}},
		{"testdata/boot", res{1000, "/boot/config-7.3.4-amd64", false}},
		{"testdata/both", res{100, "/proc/config.gz", false}}, // the running kernel's own first
		{"testdata/bad", res{0, "", true}},
		{"testdata/none", res{0, "", true}},
	}
	for _, tt := range tests {
		hz, src, err := Find(tt.root, "7.3.4-amd64")
		if err != nil && !errors.Is(err, ErrUnknown) {
			t.Errorf("%s: error %v does not wrap ErrUnknown", tt.root, err)
		}
		if diff := cmp.Diff(tt.want, res{hz, src, err != nil}); diff != "" {
			t.Errorf("Find(%s) (-want +got):\n%s", tt.root, diff)
		}
	}
}

// TestRoundTrip: msecs_to_jiffies() then jiffies_to_msecs() on the HZ
// kernels are built with, worked out by hand from jiffies.h.
func TestRoundTrip(t *testing.T) {
	tests := []struct {
		hz   HZ
		m    uint64
		want uint32
	}{
		{250, 500, 500},
		{250, 501, 504},
		{250, 250, 252},
		{250, 0, 0},
		{250, 2147483647, 2147483648}, // INT_MAX rounds up past INT_MAX
		{100, 500, 500},
		{100, 505, 510},
		{100, 2147483647, 2147483650},
		{1000, 501, 501},
		{1000, 2147483647, 2147483647},
	}
	for _, tt := range tests {
		if got := tt.hz.RoundTrip(tt.m); got != tt.want {
			t.Errorf("HZ=%d: RoundTrip(%d) = %d, want %d", tt.hz, tt.m, got, tt.want)
		}
	}
	for _, hz := range []HZ{100, 250, 1000} {
		if !hz.Exact() {
			t.Errorf("HZ=%d not Exact", hz)
		}
		if got := hz.RoundTrip(Every * 7); got != Every*7 {
			t.Errorf("HZ=%d: a multiple of Every reads back %d", hz, got)
		}
	}
	if HZ(300).Exact() || HZ(0).Exact() {
		t.Error("HZ 300 or 0 taken as Exact")
	}
}
