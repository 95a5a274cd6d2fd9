# boottest: a real boot from power-on of the installed package (test/boot/run):
# Debian trixie with its own initramfs and systemd as PID 1 under qemu, with
# every scheduler write and queue freeze counted per disk and phase; the
# same boot with CachyOS-style ATTR= rules (the control) and with neither.
.PHONY: boottest
boottest: deps deb
	test/boot/run
