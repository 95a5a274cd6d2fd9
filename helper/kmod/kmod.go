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
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Index is the module directory of the running kernel,
// /lib/modules/$(uname -r) on a real system.
type Index string

// ForRelease returns the index for a kernel release under root ("/").
func ForRelease(root, release string) Index {
	return Index(filepath.Join(root, "lib", "modules", release))
}

// Loadable reports whether modprobe would find a module for the name
// "<sched>-iosched": as an alias in modules.alias or as a module name in
// modules.dep (modprobe treats '-' and '_' in module names alike). A
// missing index means modprobe can load nothing, so the answer is false.
func (ix Index) Loadable(sched string) (bool, error) {
	want := sched + "-iosched"
	ok, err := scan(filepath.Join(string(ix), "modules.alias"), func(line string) bool {
		f := strings.Fields(line)
		return len(f) >= 3 && f[0] == "alias" && f[1] == want
	})
	if ok || err != nil {
		return ok, err
	}
	mod := underscore(want)
	return scan(filepath.Join(string(ix), "modules.dep"), func(line string) bool {
		path, _, _ := strings.Cut(line, ":")
		base := filepath.Base(path)
		if i := strings.Index(base, ".ko"); i >= 0 {
			base = base[:i]
		}
		return underscore(base) == mod
	})
}

func underscore(s string) string { return strings.ReplaceAll(s, "-", "_") }

func scan(path string, match func(string) bool) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read module index %s: %w", path, bare(err))
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if match(s.Text()) {
			return true, nil
		}
	}
	if err := s.Err(); err != nil {
		return false, fmt.Errorf("read module index %s: %w", path, bare(err))
	}
	return false, nil
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
