package queueattr

import "testing"

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

func TestFreezeRanges(t *testing.T) {
	k612, k73 := Kernel{6, 12}, Kernel{7, 3}
	for _, tc := range []struct {
		name        string
		on612, on73 bool
	}{
		{"scheduler", true, true},
		{"rotational", true, true},
		{"read_ahead_kb", true, false},
		{"iosched/fifo_batch", false, false},
	} {
		var got612, got73 bool
		for _, r := range FreezeRanges(tc.name) {
			got612 = got612 || r.Contains(k612)
			got73 = got73 || r.Contains(k73)
		}
		if got612 != tc.on612 || got73 != tc.on73 {
			t.Errorf("FreezeRanges(%q) on 6.12, 7.3 = %v, %v, want %v, %v", tc.name, got612, got73, tc.on612, tc.on73)
		}
	}
	if k, err := ParseKernel("6.12.117-amd64"); err != nil || k != k612 {
		t.Errorf("ParseKernel(6.12.117-amd64) = %v, %v", k, err)
	}
}
