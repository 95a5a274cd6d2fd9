// Package jiffies is the running kernel's tick: its HZ (CONFIG_HZ), and
// the conversions between milliseconds and jiffies that the block
// layer's stores and shows make (include/linux/jiffies.h,
// kernel/time/time.c in Linux 6.12, 7.2 and 7.3 alike).
package jiffies

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// HZ is a kernel's tick rate.
type HZ uint32

// Exact reports whether the conversions here are the kernel's own for
// hz: HZ that divide 1000 (100, 250, 1000, ...) take the kernel's plain
// path (_msecs_to_jiffies and jiffies_to_msecs for HZ <= MSEC_PER_SEC
// && !(MSEC_PER_SEC % HZ)); other HZ (300) use multiply-and-shift
// constants iosched does not model.
func (hz HZ) Exact() bool { return hz > 0 && 1000%hz == 0 }

// Msecs is how long one jiffy lasts, in ms, for an Exact hz.
func (hz HZ) Msecs() uint64 { return 1000 / uint64(hz) }

// RoundTrip is what a store of m ms through msecs_to_jiffies() reads
// back through jiffies_to_msecs(), as the unsigned int the latter
// returns, for m up to INT_MAX (above it msecs_to_jiffies() gives
// MAX_JIFFY_OFFSET) and an Exact hz: m rounded up to a whole jiffy, cut
// to 32 bits.
func (hz HZ) RoundTrip(m uint64) uint32 {
	k := hz.Msecs()
	j := (m + k - 1) / k
	return uint32(j * k)
}

// Every is a duration in ms that is a whole number of jiffies on every
// HZ x86 offers (100, 250, 300 and 1000: ticks of 10, 4, 10/3 and 1 ms),
// so that it reads back as written whatever the kernel's HZ.
const Every = 20

// ErrUnknown means the kernel's HZ could not be found.
var ErrUnknown = errors.New("the kernel's HZ is unknown")

// Running finds the running kernel's HZ under "/" (Find) once, and
// only when a value kept in jiffies asks: the configuration is a gzip
// stream most runs never need.
func Running() func() (HZ, string, error) {
	var (
		once sync.Once
		hz   HZ
		src  string
		err  error
	)
	return func() (HZ, string, error) {
		once.Do(func() {
			var u unix.Utsname
			if err = unix.Uname(&u); err != nil {
				err = fmt.Errorf("%w: uname: %w", ErrUnknown, err)
				return
			}
			hz, src, err = Find("/", unix.ByteSliceToString(u.Release[:]))
		})
		return hz, src, err
	}
}

// Find reads CONFIG_HZ of the running kernel (release as uname -r
// prints it) under root: first proc/config.gz, the kernel's own build
// configuration (CONFIG_IKCONFIG_PROC), then boot/config-RELEASE, the
// one distributions install beside the kernel image. No sysfs attribute
// shows a raw jiffy count, and a write then read back of a jiffy
// tunable would tell, but iosched never writes to learn. source is the
// file HZ came from; an error wraps ErrUnknown and names both files.
func Find(root, release string) (hz HZ, source string, err error) {
	var errs []error
	for _, f := range []string{"proc/config.gz", "boot/config-" + release} {
		p := filepath.Join(root, f)
		hz, err := fromConfig(p)
		if err == nil {
			return hz, "/" + f, nil
		}
		errs = append(errs, err)
	}
	return 0, "", fmt.Errorf("%w: %w", ErrUnknown, errors.Join(errs...))
}

func fromConfig(path string) (HZ, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		r = z
	}
	s := bufio.NewScanner(r)
	for s.Scan() {
		v, ok := strings.CutPrefix(s.Text(), "CONFIG_HZ=")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n == 0 {
			return 0, fmt.Errorf("%s: CONFIG_HZ=%q: want a positive number", path, v)
		}
		return HZ(n), nil
	}
	if err := s.Err(); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return 0, fmt.Errorf("%s: no CONFIG_HZ line", path)
}
