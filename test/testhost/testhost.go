// Package testhost holds what the root-only tests and benchmarks that run
// on this machine's own sysfs share: the repository root, where the
// binaries under test are built, and a view of /sys/block that lists only
// the disks they created, so `iosched status` reads those and nothing else.
package testhost

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/iosched/iosched/helper/sysfs"
	"golang.org/x/sys/unix"
)

// modulePath is the module whose go.mod marks the repository root.
const modulePath = "github.com/iosched/iosched"

// ErrNoRoot is returned when no go.mod of this module is above the start.
var ErrNoRoot = errors.New("repository root (go.mod of " + modulePath + ") not found")

// RepoRoot walks up from dir to the directory holding this module's go.mod.
func RepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("repository root from %s: %w", dir, err)
	}
	for start := dir; ; {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w above %s", ErrNoRoot, start)
		}
		dir = parent
	}
}

// BlockView fills the existing directory dir with the block/ symlinks of
// the given disks under sys, with the same relative targets sysfs gives
// them, so that dir bound over /sys/block resolves every path to the real
// device.
func BlockView(sys sysfs.FS, dir string, disks ...string) error {
	for _, d := range disks {
		link := sys.Path("block", d)
		target, err := os.Readlink(link)
		if err != nil {
			return fmt.Errorf("block view of %s: %w", d, err)
		}
		if err := os.Symlink(target, filepath.Join(dir, d)); err != nil {
			return fmt.Errorf("block view of %s: %w", d, err)
		}
	}
	return nil
}

// ViewCommand returns a command prefix that runs the rest of a command in
// a private mount namespace whose /sys/block is dir (see BlockView). The
// bind mount is seen by nobody else and goes away with the command.
func ViewCommand(dir string) []string {
	return []string{"unshare", "--mount", "--propagation", "private", "--",
		"sh", "-ec", `mount --bind "$0" /sys/block; exec "$@"`, dir}
}

// Mount binds dir over /sys/block, for a process that times its children
// and so cannot afford ViewCommand's extra processes. The caller must
// already be in a private mount namespace of its own (unshare(CLONE_NEWNS)
// before the Go runtime starts threads, as a re-exec does): otherwise the
// whole machine would see the view.
func Mount(dir string) error {
	if err := unix.Mount(dir, "/sys/block", "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s over /sys/block: %w", dir, err)
	}
	return nil
}

// Unmount removes the view Mount made.
func Unmount() error {
	if err := unix.Unmount("/sys/block", 0); err != nil {
		return fmt.Errorf("unmount the view over /sys/block: %w", err)
	}
	return nil
}
