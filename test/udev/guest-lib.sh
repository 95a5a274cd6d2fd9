# shellcheck shell=sh
# What the guest scripts of the udev and package tests add to the harness's
# guest library (sourced, not run; test/lib/udev.sh and test/pkg/run put it at
# /iosched-test/guest-lib.sh, and test/vm/guest/lib.sh and test/lib/ktap.sh
# beside it). They run in the Debian root filesystem under the harness
# init: start udevd, make disks, count scheduler writes. Results: the
# protocol of test/lib/ktap.sh.

IOSCHED_LIB=/iosched-test
# param, active, nullb, prof_* and, through it, ktap.sh.
# shellcheck source=test/vm/guest/lib.sh
. /iosched-test/lib.sh
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C
RULES=/etc/udev/rules.d

# The harness init (test/vm/guest/init) has mounted proc, sys, dev, run,
# tmp, configfs and tracefs, and the root read-write.
mkdir -p /run/udev

# start_udevd [NAME=VALUE...]: systemd-udevd as a daemon, with NAME=VALUE
# in its environment (guest-udevcmdline's SYSTEMD_PROC_CMDLINE).
start_udevd() {
	env "$@" /usr/lib/systemd/systemd-udevd --daemon || {
		fail "systemd-udevd --daemon failed"
		ktap_end
	}
	udevadm control --ping || sleep 1
}

# prop DISK NAME: a property from the udev database.
prop() { udevadm info --query=property "/sys/class/block/$1" 2>/dev/null | sed -n "s/^$2=//p"; }

# nullb_new NAME ROTATIONAL QUEUES [ATTR=VALUE...]: a null_blk disk (lib.sh's
# nullb) with QUEUES submit queues and no poll queue (null_blk adds one by
# default, and two hardware queues make the kernel choose none), 1 GB, not
# memory backed, so it costs nothing: prints the disk's name (the configfs
# directory's, on 6.12 as on 7.x).
nullb_new() {
	_name=$1 _rot=$2 _q=$3
	shift 3
	nullb "$_name" rotational="$_rot" poll_queues=0 submit_queues="$_q" size=1024 "$@" >&2 || return 1
	echo "$_name"
}

# sdebug_new VENDOR PRODUCT: a scsi_debug host whose disk reports VENDOR
# and PRODUCT in its INQUIRY data (the parameters apply to devices
# scanned later); prints the new disk's name.
SDP=/sys/module/scsi_debug/parameters
sdebug_new() {
	before=$(echo /sys/block/sd*)
	printf '%-8s' "$1" >$SDP/inq_vendor || return 1
	printf '%-16s' "$2" >$SDP/inq_product || return 1
	echo 1 >/sys/bus/pseudo/drivers/scsi_debug/add_host || return 1
	i=0
	while [ $i -lt 100 ]; do
		for p in /sys/block/sd*; do
			case " $before " in *" $p "*) continue ;; esac
			[ -e "$p/device/model" ] && { echo "${p##*/}"; return; }
		done
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
# count_start / count_stop: calls of elv_iosched_store (the scheduler
# write, and the queue freeze behind it) between the two, counted with the
# ftrace function profiler on all CPUs. count_taken, after count_stop: the
# calls of elevator_change() in the same window, the writes the kernel took:
# 7.3 refuses a write with EBUSY before that (and before any freeze) while
# another disk of the same tag set switches, as two virtio-scsi disks
# switching at once do, and the helper retries it. Where elevator_change
# is not traceable (inlined), the calls.
COUNT_TAKEN_FN=elv_iosched_store
grep -qx elevator_change $T/available_filter_functions 2>/dev/null && COUNT_TAKEN_FN=elevator_change
count_start() { prof_start elv_iosched_store $COUNT_TAKEN_FN; }
count_stop() {
	prof_stop
	prof_count elv_iosched_store
}
count_taken() { prof_count $COUNT_TAKEN_FN; }

# rules_mask: hide the shipped rules (same name in /etc masks /usr/lib).
rules_mask() {
	ln -sf /dev/null $RULES/60-iosched.rules
	ln -sf /dev/null $RULES/99-iosched-run.rules
}
rules_unmask() { rm -f $RULES/60-iosched.rules $RULES/99-iosched-run.rules; }
reload() { udevadm control --reload; }

# files_snap PATH...: a line for each entry of each directory PATH (not
# the directory itself) and for each other PATH, sorted: path, type,
# mode, owner, size, link target and a regular file's sha256 ("PATH
# absent" for none), what an undo must give back byte for byte.
files_snap() {
	for p in "$@"; do
		if [ -d "$p" ] && ! [ -L "$p" ]; then find "$p" -mindepth 1; else echo "$p"; fi
	done | sort -u | while read -r f; do
		if [ -e "$f" ] || [ -L "$f" ]; then
			h=-
			[ -f "$f" ] && ! [ -L "$f" ] && h=$(sha256sum <"$f" | cut -d' ' -f1)
			echo "$(find "$f" -maxdepth 0 -printf '%p %y %m %u:%g %s %l') $h"
		else
			echo "$f absent"
		fi
	done
}

# now_ns: wall clock in nanoseconds.
now_ns() { date +%s%N; }

