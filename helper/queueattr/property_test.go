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
