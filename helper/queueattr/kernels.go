package queueattr

import (
	"fmt"
	"strconv"
	"strings"
)

// Kernel is a kernel version as major.minor, the granularity at which
// the block layer's stores changed.
type Kernel struct{ Major, Minor int }

// ParseKernel reads the version at the start of a release string such as
// uname -r prints ("6.12.117-amd64", "7.3.4+bpo-amd64").
func ParseKernel(release string) (Kernel, error) {
	maj, rest, ok := strings.Cut(release, ".")
	if !ok {
		return Kernel{}, fmt.Errorf("kernel release %q: want MAJOR.MINOR", release)
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(rest[:end])
	if err1 != nil || err2 != nil || a < 0 {
		return Kernel{}, fmt.Errorf("kernel release %q: want MAJOR.MINOR", release)
	}
	return Kernel{a, b}, nil
}

func (k Kernel) String() string { return fmt.Sprintf("%d.%d", k.Major, k.Minor) }

// Before reports whether k is an older version than o.
func (k Kernel) Before(o Kernel) bool {
	return k.Major < o.Major || k.Major == o.Major && k.Minor < o.Minor
}

// FreezeRange is the kernels From up to, not including, Until on which an
// unchanged write of an attribute freezes the queue; a zero Until means
// every later kernel too.
type FreezeRange struct{ From, Until Kernel }

// Contains reports whether k is in the range.
func (r FreezeRange) Contains(k Kernel) bool {
	return !k.Before(r.From) && (r.Until == Kernel{} || k.Before(r.Until))
}

func (r FreezeRange) String() string {
	if r.Until == (Kernel{}) {
		return r.From.String() + " and later"
	}
	return r.From.String() + " to before " + r.Until.String()
}

// oldest is the oldest kernel whose stores were read and measured.
var oldest = Kernel{6, 12}

// FreezeRanges lists the kernels on which an unchanged write of the
// setting name ("scheduler", "rotational", "iosched/fifo_batch", ...)
// freezes the queue; nil when it freezes on none of them. Scheduler
// tunables go through elv_attr_store(), which never freezes. On 6.12
// queue_attr_store() froze around every store that is not a limit.
func FreezeRanges(name string) []FreezeRange {
	if name == Scheduler {
		return []FreezeRange{{From: oldest}}
	}
	s, ok := specs[name]
	switch {
	case !ok:
		return nil
	case s.Freezes:
		return []FreezeRange{{From: oldest}}
	}
	return []FreezeRange{{From: oldest, Until: Kernel{6, 13}}}
}
