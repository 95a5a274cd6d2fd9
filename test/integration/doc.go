// Package integration runs the built iosched binaries, as root, against
// loop devices that each test attaches itself, and proves with an strace
// syscall trace what they open for writing.
//
// Run `make build` first, then, as root:
//
//	go test -count=1 ./test/integration/...
//
// The tests skip only when not run as root. They need strace, losetup,
// sfdisk, partx, setpriv, flock and unshare (util-linux, fdisk), and
// fail (not skip) without them. They never write to a device they did not attach:
// each test attaches a loop device on a file in its own temporary
// directory, and its cleanup puts back the scheduler and attributes it
// found (a loop device's queue outlives a detach) and detaches it.
// `iosched status` runs in a private mount namespace whose /sys/block
// lists only the test's loop devices.
//
// The concurrency test first checks that iosched serialises its runs on
// one disk (a lock file in /run/iosched, helper/disklock): two
// overlapping writers of queue/scheduler oops a 6.18 kernel.
package integration
