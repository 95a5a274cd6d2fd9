package queueattr

import "testing"

// FuzzCheck: Predict and Check never panic, and whenever Check and the
// queue's state accept a value, the model's outcome is stable: a queue
// that reads the predicted value needs no write (Unchanged is true).
func FuzzCheck(f *testing.F) {
	for _, seed := range [][3]string{
		{"read_ahead_kb", "130", "128"},
		{"max_sectors_kb", "0", "1280"},
		{"wbt_lat_usec", "9223372036854775807", "75000"},
		{"iosched/fifo_batch", "-1", "16"},
		{"iosched/front_merges", "7", "1"},
		{"nr_requests", "100000", "256"},
		{"discard_max_bytes", "6000", "0"},
		{"write_cache", "write back", "write through"},
		{"iosched/read_expire", "250", "252"},
		{"io_timeout", "1", "4"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, name, value, current string) {
		s, err := Lookup(name)
		if err != nil {
			return
		}
		for _, q := range []queue{ssd, hdd, readOnlyLoop, fuaDisk, bigIOOpt, ssd.with(KernelHZ, "250 test"), hdd.with(KernelHZ, "100 test")} {
			q = q.with(name, current)
			o := s.Predict(value, q.read)
			if s.Check(value) != nil || s.Refusal(value, q.read) != nil || o.Kept == "" {
				continue
			}
			after := q.with(name, o.Kept)
			same, err := s.Unchanged(o.Kept, value, after.read)
			if err != nil || !same {
				t.Errorf("%s=%q on a queue reading %q: predicted %+v, but then Unchanged = %v, %v", name, value, current, o, same, err)
			}
		}
	})
}
