package udevdb

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPolicyOnly(t *testing.T) {
	all := map[string]string{
		"DEVNAME":                   "/dev/sda",
		"DEVTYPE":                   "disk",
		"ID_SERIAL":                 "X",
		"IOSCHED_SCHEDULER":         "bfq,mq-deadline",
		"IOSCHED_ATTR_wbt_lat_usec": "0",
		"IOSCHED_TUNE_fifo_batch":   "8",
		"IOSCHED_ATTR_":             "no name",
		"IOSCHED_OTHER":             "not a setting",
		"IOSCHED_CLASS_SCHEDULER":   "bfq",
		"IOSCHED_PIN":               "ID_SERIAL=X",
		"ID_MODEL":                  "not an identity a pin takes",
	}
	want := map[string]string{
		"ID_SERIAL":                 "X", // an identity a pin matches
		"IOSCHED_CLASS_SCHEDULER":   "bfq",
		"IOSCHED_PIN":               "ID_SERIAL=X",
		"IOSCHED_SCHEDULER":         "bfq,mq-deadline",
		"IOSCHED_ATTR_wbt_lat_usec": "0",
		"IOSCHED_TUNE_fifo_batch":   "8",
	}
	if diff := cmp.Diff(want, policyOnly(all)); diff != "" {
		t.Errorf("policyOnly (-want +got):\n%s", diff)
	}
}
