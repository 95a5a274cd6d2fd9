# boottest (part of `make test`): real boots from power-on of the installed
# package (test/boot/run): Debian trixie (udev 257) and sid (udev 262) with
# the initramfs initramfs-tools builds, trixie with Debian's dracut, each
# with systemd as PID 1 under qemu and every scheduler write and queue
# freeze counted per disk and phase; and the same trixie boot with
# CachyOS-style ATTR= rules (the control), so the count can fail.
.PHONY: boottest bootbench bootscale bootstacked
boottest: deps deb
	test/boot/run --out out/boottest

# bootbench (part of `make bench`): time to multi-user.target with and
# without the package on trixie with Debian's 6.12 kernel (about 30 min):
# a warm-up boot of each, then 11 paired rounds, which goes first
# alternating, timed on the guest's instruction-counted clock (on the
# host's, 7 rounds gave 1.067 and 1.000 on the same code); fails when the
# median of the per-round ratios package/none is above 1.05
# (docs/targets.md: on a quiet machine). Compares the phases and systemd-analyze blame unit by unit
# (test/boot/attribute) and rewrites docs/boot-time.md (test/boot/
# bootbench). The none boot also proves zero writes without any rules.
bench: bootbench
bootbench: deps deb
	test/boot/bootbench --out out/bootbench

# bootscale (part of `make bench`): 16 and 64 disks on one SCSI host plus
# as many null_blk disks on one tag set, booted with the package, the
# ATTR= control and no rule, on the 7.3 boot kernel and Debian's 6.12;
# fails when a package boot leaves a disk wrong, writes twice or never
# retries a refusal; rewrites docs/boot-scale.md (test/boot/scale).
bench: bootscale
bootscale: deps deb
	test/boot/scale --out out/bootscale

# bootstacked (part of `make bench`): an md RAID1 over two qemu SCSI disks
# and an LVM volume (dm-linear) on a third, both assembled by the boot, on
# Debian's 6.12 with the package, the ATTR= control and no rule; fails
# when a member leaves its documented scheduler, a package boot writes a
# disk twice or after the boot, or anything writes md or dm; rewrites
# docs/boot-stacked.md (test/boot/stacked).
bench: bootstacked
bootstacked: deps deb
	test/boot/stacked --out out/bootstacked
