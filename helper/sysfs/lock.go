package sysfs

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// LockWait bounds how long Lock waits for another iosched run on the same
// disk: long enough for a queue of switches (each ~16-40 ms, slower
// under strace), short of udev's event timeout.
const LockWait = 10 * time.Second

// Lock serialises iosched runs on one disk with an exclusive flock(2) on
// the disk's queue/ directory, opened read-only (nothing is opened for
// writing, and the lock dies with the process).
//
// Why: a 6.18 kernel takes update_nr_hwq_lock shared in
// elv_iosched_store(), so two writers of one queue/scheduler can run
// elevator_change_done() at once. Seen on 6.18.44 with 16 concurrent
// `iosched set` runs on a loop device: "sysfs: cannot create duplicate
// filename .../queue/iosched", then a general protection fault in
// blk_mq_free_rqs() <- blk_mq_free_sched_tags() <- elevator_change_done(),
// and the queue hung for good. 7.3 takes the lock exclusively (trylock,
// -EBUSY) for exactly this reason (block/elevator.c, elv_iosched_store).
// The lock also makes read-compare-write atomic among iosched runs. It
// cannot stop other writers (udev ATTR{}, shells).
//
// A queue directory that cannot be opened is not locked: the read that
// follows reports the missing disk.
func (q Queue) Lock(wait time.Duration) (unlock func(), err error) {
	dir := q.FS.Path("block", q.Disk, "queue")
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return func() {}, nil
	}
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Close(fd) }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) || time.Now().After(deadline) {
			syscall.Close(fd)
			return nil, fmt.Errorf("%s: lock %s (another iosched run on this disk?): %w", q.Disk, dir, err)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}
