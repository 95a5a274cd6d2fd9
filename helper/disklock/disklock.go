// Package disklock serialises iosched runs that write one disk, with an
// flock(2) on a per-disk file in a directory only root can reach.
//
// Why a lock at all: a 6.18 kernel takes the tag set's
// update_nr_hwq_lock shared in elv_iosched_store(), so two writers of one
// queue/scheduler can run elevator_change_done() at once. Seen on 6.18.44
// with 16 concurrent `iosched set` runs on a loop device: "sysfs: cannot
// create duplicate filename .../queue/iosched", then a general protection
// fault in blk_mq_free_rqs() <- blk_mq_free_sched_tags() <-
// elevator_change_done(), and the queue hung for good. Upstream commit
// 4ff58d6bc9dd ("block: serialize elevator changes for the same queue
// using a writer lock", block tree for 7.2) makes the kernel serialise
// them itself; 7.2 and 7.3 (block/elevator.c, elv_iosched_store) take the
// lock exclusively with a trylock and return EBUSY to the loser, which
// package apply retries. So on 7.2 and later the lock is no longer needed
// for the kernel's sake, only to make iosched's read-compare-write atomic
// among iosched runs; on kernels without that commit, such as 6.18 (no
// stable backport found), it is what keeps the kernel up.
// It cannot stop other writers (udev ATTR{}, shells).
//
// Why not a lock on the disk's sysfs queue/ directory, as before: any
// user can open that directory and flock it, which made every iosched
// run on the disk wait and then fail. The directory here is created by
// root with mode 0700, refused when it is anything else, and opened
// without following symlinks, so no other user can open, create or hold
// a lock file.
package disklock

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Wait bounds how long Lock waits for another iosched run on the same
// disk: long enough for a queue of switches (each ~16-40 ms, slower
// under strace), short of udev's event timeout.
const Wait = 10 * time.Second

// Default is the lock directory of the installed helper.
var Default = Dir{Path: "/run/iosched", Owner: 0}

// Dir is a lock directory: its path and the uid that must own it (0 in
// production; tests pass their own uid and a path under t.TempDir()).
type Dir struct {
	Path  string
	Owner int
}

// ErrUnsafe means the lock directory or a lock file is not what Lock
// creates (a symlink, another owner, another mode or type): Lock refuses
// it rather than trust a lock another user may hold.
var ErrUnsafe = errors.New("unsafe lock directory")

// Lock takes the exclusive lock of disk, waiting up to wait for another
// holder, and returns the function that releases it. The lock dies with
// the process, so a crashed run never leaves a disk locked.
func (d Dir) Lock(disk string, wait time.Duration) (unlock func(), err error) {
	if disk == "" || disk == "." || disk == ".." || strings.ContainsAny(disk, "/\x00") {
		return nil, fmt.Errorf("lock %q: not a disk name", disk)
	}
	dirfd, err := d.open()
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	name := disk + ".lock"
	path := filepath.Join(d.Path, name)
	// O_NONBLOCK: a FIFO planted here must not hang the open.
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: open lock file %s: %w", disk, path, err)
	}
	// Any mode without group or other bits will do: the directory
	// already keeps everyone else out.
	if err := d.check(fd, path, unix.S_IFREG, 0o600, 0o077); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", disk, err)
	}
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { unix.Close(fd) }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) || time.Now().After(deadline) {
			unix.Close(fd)
			return nil, fmt.Errorf("%s: lock %s (another iosched run on this disk?): %w", disk, path, err)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// open makes the directory if it is missing and opens it, refusing a
// symlink (O_NOFOLLOW), a non-directory, another owner or another mode.
// The parent (/run) is trusted as it is: root's, and not writable by
// others.
func (d Dir) open() (int, error) {
	parent, base := filepath.Dir(d.Path), filepath.Base(d.Path)
	if !filepath.IsAbs(d.Path) || base == "/" || base == "." || base == ".." {
		return -1, fmt.Errorf("lock directory %q: want an absolute path", d.Path)
	}
	pfd, err := retryEINTR(func() (int, error) {
		return unix.Open(parent, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", parent, err)
	}
	defer unix.Close(pfd)
	if err := unix.Mkdirat(pfd, base, 0o700); err == nil {
		// mkdirat's mode went through the umask; ours is exact. Set it
		// before the open: under umask 0777 the directory is mode 0 and
		// only root could open it. The parent is trusted, so the name
		// still is the directory just made.
		if err := unix.Fchmodat(pfd, base, 0o700, 0); err != nil {
			return -1, fmt.Errorf("chmod lock directory %s: %w", d.Path, err)
		}
	} else if !errors.Is(err, unix.EEXIST) {
		return -1, fmt.Errorf("create lock directory %s: %w", d.Path, err)
	}
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(pfd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return -1, fmt.Errorf("lock directory %s: not a directory (a symlink?): %w", d.Path, ErrUnsafe)
	}
	if err != nil {
		return -1, fmt.Errorf("open lock directory %s: %w", d.Path, err)
	}
	if err := d.check(fd, d.Path, unix.S_IFDIR, 0o700, 0o7777); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// check refuses fd unless it is of type typ, owned by d.Owner, and its
// mode bits under mask are those of perm.
func (d Dir) check(fd int, path string, typ, perm, mask uint32) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != typ:
		return fmt.Errorf("%s: file type %#o, want %#o: %w", path, st.Mode&unix.S_IFMT, typ, ErrUnsafe)
	case int(st.Uid) != d.Owner:
		return fmt.Errorf("%s: owned by uid %d, want %d: %w", path, st.Uid, d.Owner, ErrUnsafe)
	case st.Mode&mask != perm&mask:
		return fmt.Errorf("%s: mode %#o, want %#o: %w", path, st.Mode&0o7777, perm, ErrUnsafe)
	}
	return nil
}

func retryEINTR(f func() (int, error)) (int, error) {
	for {
		fd, err := f()
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}
