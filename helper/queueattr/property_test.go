package queueattr

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPropertyRoundTrip(t *testing.T) {
	for _, tc := range []struct{ name, prop string }{
		{"scheduler", "IOSCHED_SCHEDULER"},
		{"wbt_lat_usec", "IOSCHED_ATTR_wbt_lat_usec"},
		{"iosched/fifo_batch", "IOSCHED_TUNE_fifo_batch"},
	} {
		if got := Property(tc.name); got != tc.prop {
			t.Errorf("Property(%q) = %q, want %q", tc.name, got, tc.prop)
		}
		if got, ok := FromProperty(tc.prop); !ok || got != tc.name {
			t.Errorf("FromProperty(%q) = %q, %v, want %q, true", tc.prop, got, ok, tc.name)
		}
	}
	for _, prop := range []string{"", "IOSCHED_ATTR_", "IOSCHED_TUNE_", "IOSCHED_SCHEDULERX", "DEVPATH"} {
		if got, ok := FromProperty(prop); ok {
			t.Errorf("FromProperty(%q) = %q, true, want false", prop, got)
		}
	}
}

// TestFreezeRanges: on which kernels an unchanged write of each setting
// freezes, for every setting iosched knows (see kernels.go for the
// commits that moved the line).
func TestFreezeRanges(t *testing.T) {
	kernels := []Kernel{{6, 12}, {6, 14}, {6, 15}, {6, 17}, {6, 18}, {7, 3}}
	limit := []bool{true, true, true, true, true, true}
	ownStore := []bool{true, true, true, true, false, false}
	never := []bool{false, false, false, false, false, false}
	want := map[string][]bool{Scheduler: limit, "iosched/fifo_batch": never, "iosched/slice_idle": never}
	for _, n := range Names() {
		want[n] = limit
	}
	for _, n := range []string{"read_ahead_kb", "nomerges", "rq_affinity", "io_timeout", "nr_requests"} {
		want[n] = ownStore
	}
	got := map[string][]bool{}
	for name := range want {
		for _, k := range kernels {
			in := false
			for _, r := range FreezeRanges(name) {
				in = in || r.Contains(k)
			}
			got[name] = append(got[name], in)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FreezeRanges on %v (-want +got):\n%s", kernels, diff)
	}
	if r := FreezeRanges("no_such_attr"); r != nil {
		t.Errorf("FreezeRanges(no_such_attr) = %v, want nil", r)
	}
	if k, err := ParseKernel("6.12.117-amd64"); err != nil || k != (Kernel{6, 12}) {
		t.Errorf("ParseKernel(6.12.117-amd64) = %v, %v", k, err)
	}
}
