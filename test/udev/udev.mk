# udev end-to-end test and benchmark: the shipped rules and the helper,
# installed with `make install DESTDIR=...` into a copy of the Debian
# trixie root filesystem, under a real systemd-udevd in qemu (test/udev/run).
.PHONY: udevtest udevbench udevfleet udevfleetbench udevcmdline
# Each depends on build and man, so the `make install` test/udev/run runs
# finds both made: `make test` runs these side by side, and two makes
# writing bin/iosched.8 at once would race.
udevtest: build man
	test/udev/run test

# status --check, apply and the Prometheus output against a real udev
# database, with writes counted by ftrace.
udevfleet: build man
	test/udev/run fleet

# apply against status on 64 null_blk disks whose policy holds: zero
# writes, and apply within 1.2x of status's time.
udevfleetbench: build man
	test/udev/run fleetbench

# Rewrites the measured section of docs/udev.md.
udevbench: build man
	test/udev/run bench

# `iosched audit --fix` and --undo on distribution-style rules under the
# real udevd: freezes counted before, after and undone (guest-udevfix).
.PHONY: udevfix
udevfix: build man
	test/udev/run fix

# `make bench` runs the fleet benchmark too.
bench: udevfleetbench

# The kernel command line's choice (iosched.scheduler=, elevator=) read by
# the rules: a boot of its own with the parameters set (not in make test).
udevcmdline: build man
	test/udev/run cmdline
