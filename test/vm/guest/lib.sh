# shellcheck shell=sh
# Shared by the guest scripts of vmtest and vmbench (sourced, not run; busybox
# sh in the harness initramfs). Results go to stdout as "@@ " lines
# (test/vm/HARNESS.md); the harness init prints "@@ exit N" from our status.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# shellcheck source=test/vm/guest/report.sh
. /iosched/report.sh

# param NAME DEFAULT: the value of iosched.NAME=VALUE on the kernel command
# line (the host passes each test's expectations there).
param() {
	v=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^iosched\.$1=//p" | tail -n 1)
	echo "${v:-$2}"
}

# active DISK: the bracketed (active) scheduler of DISK, "" if the file
# holds not exactly one bracketed name.
active() {
	s=$(cat "/sys/block/$1/queue/scheduler")
	n=$(echo "$s" | tr ' ' '\n' | grep -c '^\[.*\]$')
	[ "$n" -eq 1 ] || { echo ""; return; }
	echo "$s" | tr ' ' '\n' | sed -n 's/^\[\(.*\)\]$/\1/p'
}

# setsched DISK NAME: write NAME, fail loudly if the write fails.
setsched() {
	echo "$2" >"/sys/block/$1/queue/scheduler" 2>/dev/null ||
		{ fail "write $2 to $1/queue/scheduler"; return 1; }
}

# nullb NAME [ATTR=VALUE...]: make a null_blk disk through configfs
# (boot with null_blk.nr_devices=0, so the tests own every nullb disk).
nullb() {
	name=$1
	shift
	d=/sys/kernel/config/nullb/$name
	mkdir "$d" || { fail "mkdir $d"; return 1; }
	for a in "$@"; do
		echo "${a#*=}" >"$d/${a%%=*}" || { fail "$name: set $a"; return 1; }
	done
	echo 1 >"$d/power" || { fail "$name: power on"; return 1; }
	i=0
	while [ ! -e "/sys/block/$name" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ -e "/sys/block/$name" ] || { fail "$name: no /sys/block/$name"; return 1; }
	[ -b "/dev/$name" ] || mknod "/dev/$name" b "$(cut -d: -f1 "/sys/block/$name/dev")" \
		"$(cut -d: -f2 "/sys/block/$name/dev")"
}

# field KEY LINE: the value of KEY=VALUE in a swtime output line.
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# io_loop DISK LOG: direct-I/O reads and writes on DISK until killed,
# one line per successful dd in LOG (so the caller can check I/O ran).
io_loop() {
	while :; do
		dd if="/dev/$1" of=/dev/null bs=64k count=64 iflag=direct 2>/dev/null &&
			echo r >>"$2"
		dd if=/dev/zero of="/dev/$1" bs=64k count=64 oflag=direct 2>/dev/null &&
			echo w >>"$2"
	done
}

# finish: the status the harness init reports as "@@ exit N".
finish() {
	[ "$failed" -eq 0 ] && exit 0
	exit 1
}
