package apply

import (
	"errors"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/iosched/iosched/helper/queueattr"
)

// attrQueue is a queue's attributes; a write stores what keeps returns
// (the kernel's own decision, given per test), or the value as written.
type attrQueue struct {
	vals   map[string]string // queue attributes, and the disk's as "../NAME"
	keeps  func(attr, v string) string
	writes []string
}

func (q *attrQueue) Name() string            { return "sdx" }
func (q *attrQueue) Path(attr string) string { return "/sys/block/sdx/queue/" + attr }

func (q *attrQueue) Read(attr string) (string, error) {
	v, ok := q.vals[attr]
	if !ok {
		return "", syscall.ENOENT
	}
	return v, nil
}

func (q *attrQueue) ReadDisk(attr string) (string, error) { return q.Read("../" + attr) }

func (q *attrQueue) Write(attr, v string) error {
	q.writes = append(q.writes, attr+"="+v)
	if q.keeps != nil {
		v = q.keeps(attr, v)
	}
	q.vals[attr] = v
	return nil
}

func loopQueue() map[string]string {
	return map[string]string{
		"scheduler": "[none] mq-deadline", "rotational": "0", "read_ahead_kb": "128",
		"max_hw_sectors_kb": "32767", "logical_block_size": "512", "optimal_io_size": "0",
		"minimum_io_size": "512", "max_sectors_kb": "1280", "nr_requests": "128",
		"../mq/0/nr_tags": "128", "../mq/0/nr_reserved_tags": "0", "wbt_lat_usec": "2000",
		"write_cache": "write through", "fua": "0", "../ro": "0", "../loop/backing_file": "/tmp/img",
		"iosched/front_merges": "1",
	}
}

// TestAttrConverges: every value is either refused before a write or
// written once and holds; a write only the write could judge, that did
// not hold, is reported and not made again.
func TestAttrConverges(t *testing.T) {
	type step struct {
		attr, value string
		wantErr     error
		wantWrites  []string // all writes so far
	}
	tests := []struct {
		name  string
		vals  map[string]string
		keeps func(attr, v string) string
		steps []step
	}{
		{name: "kept in pages: refused", steps: []step{{"read_ahead_kb", "130", queueattr.ErrBadValue, nil}}},
		{name: "unchanged: no write", steps: []step{{"read_ahead_kb", "128", nil, nil}}},
		{name: "changed: one write", steps: []step{
			{"read_ahead_kb", "256", nil, []string{"read_ahead_kb=256"}},
			{"read_ahead_kb", "256", nil, []string{"read_ahead_kb=256"}},
		}},
		{name: "max_sectors_kb=0 is the default", keeps: func(a, v string) string { return "4096" }, steps: []step{
			{"max_sectors_kb", "0", nil, []string{"max_sectors_kb=0"}},
			{"max_sectors_kb", "0", nil, []string{"max_sectors_kb=0"}},
		}},
		{name: "wbt overflow: refused", steps: []step{{"wbt_lat_usec", "9223372036854775807", queueattr.ErrBadValue, nil}}},
		{name: "nr_requests above the depth: refused", steps: []step{{"nr_requests", "100000", queueattr.ErrBadValue, nil}}},
		{name: "clamped tunable: refused", steps: []step{{"iosched/front_merges", "7", queueattr.ErrBadValue, nil}}},
		{name: "write back on a read-only loop device: refused",
			vals:  map[string]string{"../ro": "1", queueattr.LoopReadOnly: "1"},
			steps: []step{{"write_cache", "write back", queueattr.ErrBadValue, nil}}},
		{name: "write back without a cache the kernel shows: once",
			vals:  map[string]string{"../loop/backing_file": ""},
			keeps: func(a, v string) string { return "write through" },
			steps: []step{
				{"write_cache", "write back", ErrNotApplied, []string{"write_cache=write back"}},
				{"write_cache", "write back", ErrNotApplied, []string{"write_cache=write back"}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &attrQueue{vals: loopQueue(), keeps: tt.keeps}
			for k, v := range tt.vals {
				if v == "" {
					delete(q.vals, k)
				} else {
					q.vals[k] = v
				}
			}
			d := NewDisk(q)
			for _, s := range tt.steps {
				spec, err := queueattr.Lookup(s.attr)
				if err != nil {
					t.Fatal(err)
				}
				_, err = d.Attr(spec, s.value)
				if !errors.Is(err, s.wantErr) || (err == nil) != (s.wantErr == nil) {
					t.Errorf("%s=%s: error %v, want %v", s.attr, s.value, err, s.wantErr)
				}
				if diff := cmp.Diff(s.wantWrites, q.writes); diff != "" {
					t.Errorf("%s=%s: writes (-want +got):\n%s", s.attr, s.value, diff)
				}
			}
		})
	}
}

// TestAfterSwitch: a dry run compares nr_requests with what the switch
// will set it to, not with what it reads now.
func TestAfterSwitch(t *testing.T) {
	spec, _ := queueattr.Lookup("nr_requests")
	tests := []struct {
		from, to, want string
		wantRes        AttrResult
	}{
		// none -> mq-deadline: 2 * min(depth 128, 128) = 256.
		{"none", "mq-deadline", "128", AttrResult{Attr: "nr_requests", From: "256", To: "128", Changed: true, AfterSwitch: true}},
		{"none", "mq-deadline", "256", AttrResult{Attr: "nr_requests", From: "256", To: "256", AfterSwitch: true}},
		// Without a scheduler, above the depth is refused.
		{"mq-deadline", "none", "256", AttrResult{Attr: "nr_requests", From: "128", To: "256", AfterSwitch: true}},
	}
	for _, tt := range tests {
		vals := loopQueue()
		vals["nr_requests"] = "128"
		q := &attrQueue{vals: vals}
		d := NewDisk(q)
		d.DryRun = true
		got, err := d.AfterSwitch(tt.from, tt.to).Attr(spec, tt.want)
		if tt.to == "none" {
			if !errors.Is(err, queueattr.ErrBadValue) {
				t.Errorf("%s -> %s, nr_requests=%s: error %v, want ErrBadValue", tt.from, tt.to, tt.want, err)
			}
		} else if err != nil {
			t.Errorf("%s -> %s, nr_requests=%s: %v", tt.from, tt.to, tt.want, err)
		}
		if diff := cmp.Diff(tt.wantRes, got); diff != "" {
			t.Errorf("%s -> %s, nr_requests=%s (-want +got):\n%s", tt.from, tt.to, tt.want, diff)
		}
		if len(q.writes) != 0 {
			t.Errorf("dry run wrote %q", q.writes)
		}
	}
}
