# udev end-to-end test and benchmark: the shipped rules and the helper,
# installed with `make install DESTDIR=...` into a copy of the Debian
# trixie root filesystem, under a real systemd-udevd in qemu (test/udev/run).
.PHONY: udevtest udevbench
udevtest: build
	test/udev/run test

# Rewrites the measured section of docs/udev.md.
udevbench: build
	test/udev/run bench

# `iosched audit --fix` and --undo on distribution-style rules under the
# real udevd: freezes counted before, after and undone (guest-udevfix).
.PHONY: udevfix
udevfix: build
	test/udev/run fix
