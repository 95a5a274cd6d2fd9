package queueattr

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// kernelsTSV is what test/vm/kernels measure (test/check bench/kernels) measured on
// the kernels people run, the data behind docs/kernels.md.
//
//go:embed kernels.tsv
var kernelsTSV string

// MeasuredFile names the data where its readers can find it.
const MeasuredFile = "helper/queueattr/kernels.tsv"

// Measurement is one line of kernels.tsv: unchanged writes of one setting
// on one kernel, booted on null_blk.
type Measurement struct {
	// Key is the setting as the guest (test/vm/guest/kernels) names it:
	// NAME for queue/NAME, scheduler=NAME for NAME written while active,
	// SCHED:iosched/NAME for a tunable of SCHED.
	Key string
	// Status is "ok", or why there is no number: "absent" (no such
	// file), "readonly", "failed".
	Status string
	// Median is the median write(2) time; Freezes the queue freezes and
	// Modprobe the modprobe runs the Writes writes took. Zero unless
	// Status is "ok".
	Median                    time.Duration
	Freezes, Writes, Modprobe int
}

// Setting is the name FreezeRanges and Property take: "scheduler" for
// every scheduler=NAME, "iosched/NAME" for SCHED:iosched/NAME.
func (m Measurement) Setting() string {
	if _, ok := strings.CutPrefix(m.Key, Scheduler+"="); ok {
		return Scheduler
	}
	if _, t, ok := strings.Cut(m.Key, ":"); ok {
		return t
	}
	return m.Key
}

// Cell is the measurement as docs/kernels.md shows it: "median ms /
// freezes per write", then "(+N modprobe)" per write when there are any;
// the status when there is no number.
func (m Measurement) Cell() string {
	if m.Status != "ok" {
		return m.Status
	}
	v := float64(m.Median) / float64(time.Millisecond)
	f := "%.3f"
	if v >= 0.1 {
		f = "%.1f"
	}
	s := fmt.Sprintf(f+" / %g", v, float64(m.Freezes)/float64(m.Writes))
	if m.Modprobe > 0 {
		s += fmt.Sprintf(" (+%g modprobe)", float64(m.Modprobe)/float64(m.Writes))
	}
	return s
}

// MeasuredKernel is one kernel's lines of kernels.tsv, in file order.
type MeasuredKernel struct {
	Release string // uname -r of the guest, "7.3.4+"
	Kernel  Kernel
	Rows    []Measurement
}

// Row returns the measurement of key (Measurement.Key).
func (k MeasuredKernel) Row(key string) (Measurement, bool) {
	for _, m := range k.Rows {
		if m.Key == key {
			return m, true
		}
	}
	return Measurement{}, false
}

// tsvFields are kernels.tsv's columns.
var tsvFields = []string{"VERSION", "KEY", "STATUS", "MEDIAN_NS", "FREEZES", "WRITES", "MODPROBE"}

// ParseMeasured reads kernels.tsv: '#' lines are comments; every other
// line is VERSION KEY STATUS MEDIAN_NS FREEZES WRITES MODPROBE, separated
// by tabs, the numbers "-" unless STATUS is ok. Kernels come in the order
// of their first line; one release per major.minor, one line per key.
// name is the file's name in errors.
func ParseMeasured(name string, r io.Reader) ([]MeasuredKernel, error) {
	var ks []MeasuredKernel
	at := map[string]int{}        // release -> index in ks
	series := map[Kernel]string{} // major.minor -> its release
	seen := map[[2]string]int{}   // release, key -> line
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		bad := func(field int, format string, a ...any) error {
			return fmt.Errorf("%s:%d: field %d (%s): %s", name, n, field+1, tsvFields[field], fmt.Sprintf(format, a...))
		}
		f := strings.Split(line, "\t")
		if len(f) != len(tsvFields) {
			return nil, fmt.Errorf("%s:%d: %d tab-separated fields, want %d (%s)", name, n, len(f), len(tsvFields), strings.Join(tsvFields, " "))
		}
		k, err := ParseKernel(f[0])
		if err != nil {
			return nil, bad(0, "%v", err)
		}
		if r, ok := series[k]; ok && r != f[0] {
			return nil, bad(0, "%q is a second %v kernel after %q", f[0], k, r)
		}
		if !validKey(f[1]) {
			return nil, bad(1, "%q: want NAME, scheduler=NAME or SCHED:iosched/NAME", f[1])
		}
		if l, ok := seen[[2]string{f[0], f[1]}]; ok {
			return nil, bad(1, "%q on %s measured again (first on line %d)", f[1], f[0], l)
		}
		m := Measurement{Key: f[1], Status: f[2]}
		switch f[2] {
		case "ok":
			var v [4]int64
			for i := range v {
				v[i], err = strconv.ParseInt(f[3+i], 10, 64)
				if err != nil || v[i] < 0 {
					return nil, bad(3+i, "%q: want a count >= 0", f[3+i])
				}
			}
			if v[2] == 0 {
				return nil, bad(5, "0 writes")
			}
			m.Median, m.Freezes, m.Writes, m.Modprobe = time.Duration(v[0]), int(v[1]), int(v[2]), int(v[3])
		case "absent", "readonly", "failed":
			for i := 3; i < len(f); i++ {
				if f[i] != "-" {
					return nil, bad(i, "%q: want - when STATUS is %s", f[i], f[2])
				}
			}
		default:
			return nil, bad(2, "%q: want ok, absent, readonly or failed", f[2])
		}
		seen[[2]string{f[0], f[1]}] = n
		i, ok := at[f[0]]
		if !ok {
			i = len(ks)
			at[f[0]] = i
			series[k] = f[0]
			ks = append(ks, MeasuredKernel{Release: f[0], Kernel: k})
		}
		ks[i].Rows = append(ks[i].Rows, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ks, nil
}

// validKey reports whether key is NAME, scheduler=NAME or
// SCHED:iosched/NAME, each NAME an identifier or a scheduler name.
func validKey(key string) bool {
	name := func(s string) bool {
		return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == ""
	}
	if s, ok := strings.CutPrefix(key, Scheduler+"="); ok {
		return name(s)
	}
	if s, t, ok := strings.Cut(key, ":"); ok {
		t, ok := strings.CutPrefix(t, TunablePrefix)
		return ok && name(s) && name(t)
	}
	return name(key)
}

var measured = sync.OnceValues(func() ([]MeasuredKernel, error) {
	return ParseMeasured(MeasuredFile, strings.NewReader(kernelsTSV))
})

// Measured returns the kernels of the embedded kernels.tsv, a copy the
// caller may change.
func Measured() ([]MeasuredKernel, error) {
	ks, err := measured()
	out := slices.Clone(ks)
	for i := range out {
		out[i].Rows = slices.Clone(out[i].Rows)
	}
	return out, err
}

// lastMinor is the last release of each finished major series: the
// release after 6.19 was 7.0.
var lastMinor = map[int]int{3: 19, 4: 20, 5: 19, 6: 19}

// releaseIndex numbers mainline releases in order, so that the distance
// between two kernels is the number of releases between them. A major
// whose last minor is not known is taken to have had 20 releases.
func releaseIndex(k Kernel) int {
	i := 0
	for m := 0; m < k.Major; m++ {
		last, ok := lastMinor[m]
		if !ok {
			last = 19
		}
		i += last + 1
	}
	return i + k.Minor
}

// Nearest returns the kernel of ks nearest to k: the one of the same
// major.minor if there is one, else the one the fewest mainline releases
// away (6.18 is 5 releases from 7.3, 6 from 6.12). A tie goes to the
// older kernel, whose code the newer one grew from. False when ks is
// empty.
func Nearest(k Kernel, ks []MeasuredKernel) (MeasuredKernel, bool) {
	best, dist := -1, 0
	for i, m := range ks {
		d := releaseIndex(m.Kernel) - releaseIndex(k)
		if d < 0 {
			d = -d
		}
		if best < 0 || d < dist || d == dist && m.Kernel.Before(ks[best].Kernel) {
			best, dist = i, d
		}
	}
	if best < 0 {
		return MeasuredKernel{}, false
	}
	return ks[best], true
}
