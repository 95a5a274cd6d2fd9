# shellcheck shell=bash
# udev.sh: the host side of the udev guests (test/udev/guest-udevMODE),
# for the tests and benchmarks that boot them (bash, sourced by test/check's
# tests): the helper and the rules a `make install-files DESTDIR=...`
# installs, copied into a qemu snapshot of the harness's Debian trixie
# root filesystem (test/vm/mkrootfs; the cached image is never written),
# booted on the 7.3 base kernel (test/vm/build-kernels) under a real
# systemd-udevd (test/vm/run --rootfs).

# udev_guest MODE DIR: boot test/udev/guest-udevMODE with its results in
# DIR/vm/results, and tally them (ktap_tally): one result. The guest gets
# an extra virtio disk (vdb); the end-to-end test (MODE test) also two
# virtio-scsi disks, one with QEMU's identity and one that only its
# adapter's driver tells apart. A guest may ask for kernel parameters of
# its own with a "# append: ARGS" line, and a longer limit than 900 s
# with "# timeout: SECS". Any further ARGS go to test/vm/run
# as they are (a test's own --guest-file and --scsi-disk).
udev_guest() {
	local mode=$1 out=$2 kernel image stage udevdir extra timeout f
	local -a files=()
	shift 2
	kernel=$(test/vm/build-kernels 7.3)/base/bzImage || { fail "guest-udev$mode: the 7.3 base kernel"; return 1; }
	image=$(test/vm/mkrootfs) || { fail "guest-udev$mode: the root filesystem"; return 1; }
	made build man || { fail "guest-udev$mode: make build man"; return 1; }
	mkdir -p "$out"
	stage=$out/destdir
	rm -rf "$stage"
	if ! make -s install-files DESTDIR="$stage" PREFIX=/usr >"$out/install.log" 2>&1; then
		cat "$out/install.log" >&2
		fail "guest-udev$mode: make install-files"
		return 1
	fi
	# /usr/lib/udev, or /lib/udev from an older udev.pc (the same
	# directory in trixie's merged /usr).
	udevdir=usr/lib/udev
	[ -d "$stage/$udevdir" ] || udevdir=lib/udev
	for f in usr/sbin/iosched $udevdir/iosched-udev $udevdir/rules.d/60-iosched.rules \
		$udevdir/rules.d/99-iosched-run.rules; do
		[ -e "$stage/$f" ] || { fail "guest-udev$mode: make install put no /$f"; return 1; }
	done
	for f in $(cd "$stage" && find . ! -type d | sed 's|^\.||' | LC_ALL=C sort); do
		files+=(--guest-file "$stage$f:$f")
	done
	truncate -s 64M "$out/vdb.img"
	if [ "$mode" = test ]; then
		truncate -s 64M "$out/scsi0.img" "$out/scsi1.img"
		files+=(--scsi-disk "$out/scsi0.img" --scsi-disk "$out/scsi1.img,vendor=ACME,product=CLOUD_DISK")
	fi
	extra=$(sed -n 's/^# append: //p' "test/udev/guest-udev$mode")
	timeout=$(sed -n 's/^# timeout: //p' "test/udev/guest-udev$mode")
	log "booting $kernel${extra:+ with $extra}"
	test/vm/run --kernel "$kernel" --rootfs "$image" --guest "test/udev/guest-udev$mode" \
		--guest-file "test/udev/guest-lib.sh:/iosched-test/guest-lib.sh" \
		--guest-file "test/lib/ktap.sh:/iosched-test/ktap.sh" \
		--guest-file "test/vm/guest/lib.sh:/iosched-test/lib.sh" \
		"${files[@]}" "$@" --disk "$out/vdb.img" \
		--append "null_blk.nr_devices=0${extra:+ $extra}" --timeout "${timeout:-900}" --out "$out/vm" || true
	rm -f "$out/vdb.img" "$out/scsi0.img" "$out/scsi1.img"
	ktap_tally "guest-udev$mode" "$out/vm/results"
}
