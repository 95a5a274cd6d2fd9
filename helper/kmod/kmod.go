// Package kmod answers whether modprobe could load the module the kernel
// asks for when a scheduler name is written: elv_iosched_load_module()
// calls request_module("%s-iosched", name) for any name that is not
// registered (block/elevator.c:775-784).
//
// Knowing this before writing matters: on 7.3 a write of a name that no
// module provides still allocates, freezes the queue and only then fails
// with EINVAL (elevator_change -> elevator_switch, block/elevator.c:661-680).
package kmod

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Index is the module directory of the running kernel,
// /lib/modules/$(uname -r) on a real system.
type Index string

// ForRelease returns the index for a kernel release under root ("/").
func ForRelease(root, release string) Index {
	return Index(filepath.Join(root, "lib", "modules", release))
}

// Running is the index of the running kernel; "" (no module loadable)
// when uname(2) fails.
func Running() Index {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return ForRelease("/", unix.ByteSliceToString(u.Release[:]))
}

// LoadableOnce is Loadable of index(), each name asked once: a policy's
// read-only pass asks and the pass under the lock asks again, the index
// does not change in between, and reading it is the slowest part of a
// udev run that needs a module.
func LoadableOnce(index func() Index) func(sched string) (bool, error) {
	seen := map[string]bool{}
	return func(sched string) (bool, error) {
		if ok, asked := seen[sched]; asked {
			return ok, nil
		}
		ok, err := index().Loadable(sched)
		if err == nil {
			seen[sched] = ok
		}
		return ok, err
	}
}

// Loadable reports whether modprobe would find a module for the name
// "<sched>-iosched": as an alias in modules.alias or as a module name in
// modules.dep (modprobe treats '-' and '_' in module names alike). A
// missing index means modprobe can load nothing, so the answer is false.
//
// Each file is read once and searched as bytes: a distribution kernel's
// index is large (Debian's 6.12: 27,000 aliases, 1.4 MB, and 0.6 MB of
// dependencies), kyber is not among the aliases, and the udev helper
// asks this on the boot's critical path, where splitting every line
// into fields took 12 ms on the host and seconds under emulation.
func (ix Index) Loadable(sched string) (bool, error) {
	want := sched + "-iosched"
	ok, err := search(filepath.Join(string(ix), "modules.alias"), func(data []byte) bool {
		return hasAlias(data, want)
	})
	if ok || err != nil {
		return ok, err
	}
	return search(filepath.Join(string(ix), "modules.dep"), func(data []byte) bool {
		return hasModule(data, underscore(want))
	})
}

func underscore(s string) string { return strings.ReplaceAll(s, "-", "_") }

// hasAlias reports whether data (modules.alias) holds a line
// "alias WANT MODULE": only the lines where WANT occurs are split.
func hasAlias(data []byte, want string) bool {
	w := []byte(want)
	for off := 0; ; {
		i := bytes.Index(data[off:], w)
		if i < 0 {
			return false
		}
		i += off
		start := bytes.LastIndexByte(data[:i], '\n') + 1
		end := bytes.IndexByte(data[i:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += i
		}
		f := bytes.Fields(data[start:end])
		if len(f) >= 3 && string(f[0]) == "alias" && string(f[1]) == want {
			return true
		}
		off = end
	}
}

// hasModule reports whether data (modules.dep, "PATH: DEPS" lines) lists
// a module whose file name, up to ".ko", is mod with '-' read as '_'.
func hasModule(data []byte, mod string) bool {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			line = line[:i]
		}
		base := line[bytes.LastIndexByte(line, '/')+1:]
		if i := bytes.Index(base, []byte(".ko")); i >= 0 {
			base = base[:i]
		}
		if sameModule(base, mod) {
			return true
		}
	}
	return false
}

// sameModule compares a module name with mod (already with '_' for '-').
func sameModule(name []byte, mod string) bool {
	if len(name) != len(mod) {
		return false
	}
	for i, c := range name {
		if c == '-' {
			c = '_'
		}
		if c != mod[i] {
			return false
		}
	}
	return true
}

// search reads path whole and reports match(its contents); a missing file
// matches nothing.
func search(path string, match func([]byte) bool) (bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read module index %s: %w", path, bare(err))
	}
	return match(data), nil
}

// bare drops the *fs.PathError layer, whose text repeats the path the
// message names already ("read X: read X: is a directory").
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
