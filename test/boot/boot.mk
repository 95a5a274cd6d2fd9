# boottest (part of `make test`): real boots from power-on of the installed
# package (test/boot/run): Debian trixie (udev 257) and sid (udev 262) with
# the initramfs initramfs-tools builds, trixie with Debian's dracut, each
# with systemd as PID 1 under qemu and every scheduler write and queue
# freeze counted per disk and phase; and the same trixie boot with
# CachyOS-style ATTR= rules (the control), so the count can fail.
.PHONY: boottest bootbench
boottest: deps deb
	test/boot/run --out out/boottest

# bootbench (part of `make bench`): time to multi-user.target with and
# without the package, 5 boots each, interleaved in one run, on trixie;
# the none boot also proves zero writes without any rules.
bench: bootbench
bootbench: deps deb
	test/boot/run --out out/bootbench --boots "package none" --rounds 5
