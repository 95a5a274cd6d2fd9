# shellcheck shell=sh
# How every guest script reports (sourced, not run, by guest/lib.sh in the
# harness initramfs and by test/udev/guest-lib.sh in the root filesystem):
# results go to stdout as "@@ " lines (test/vm/HARNESS.md), failures are
# counted in $failed.

failed=0

log() { echo "guest: $*"; }
result() { echo "@@ $*"; }
ok() { result "ok $*"; }
fail() {
	result "FAIL $*"
	failed=$((failed + 1))
}
# check NAME WANT GOT
check() {
	if [ "$2" = "$3" ]; then ok "$1: $3"; else fail "$1: want '$2', got '$3'"; fi
}
