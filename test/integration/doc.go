// Package integration runs the built iosched binaries, as root, against
// loop devices that each test attaches itself, and proves with an strace
// syscall trace what they open for writing.
//
// Run `make build` first, then, as root:
//
//	go test -count=1 ./test/integration/...
//
// The tests skip only when not run as root. They need strace, losetup,
// sfdisk and setpriv, and fail (not skip) without them. They never write to
// a device they did not attach: each test attaches a loop device on a file
// in its own temporary directory, and its cleanup puts back the scheduler
// it found (a loop device's queue outlives a detach) and detaches it.
package integration
