# shellcheck shell=sh
# Shared by the guest scripts of the udev test and benchmark (sourced, not
# run; test/udev/run puts it at /iosched-test/guest-lib.sh). They run in
# the Debian root filesystem under the harness init: mount what udevd
# needs, start it, make disks, count scheduler writes. Results go to
# stdout as "@@ " lines (test/vm/HARNESS.md).

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C
T=/sys/kernel/tracing
RULES=/etc/udev/rules.d
# log, result, ok, fail, check: test/vm/guest/report.sh, put beside us.
# shellcheck source=test/vm/guest/report.sh
. /iosched-test/report.sh

# finish: the exit status; the harness init prints "@@ exit N" from it.
finish() {
	log "$failed failed check(s)"
	[ "$failed" -eq 0 ]
	exit
}

mounted() { grep -q " $1 " /proc/mounts 2>/dev/null; }

setup_mounts() {
	mounted /proc || mount -t proc proc /proc
	mounted /sys || mount -t sysfs sysfs /sys
	mounted /dev || mount -t devtmpfs devtmpfs /dev
	mounted /run || mount -t tmpfs -o mode=0755 tmpfs /run
	mounted /tmp || mount -t tmpfs tmpfs /tmp
	mounted /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
	mounted $T || mount -t tracefs tracefs $T
	mount -o remount,rw / 2>/dev/null || true
	mkdir -p /run/udev
}

start_udevd() {
	/usr/lib/systemd/systemd-udevd --daemon || {
		fail "systemd-udevd --daemon failed"
		finish
	}
	udevadm control --ping || sleep 1
}

# active DISK: the bracketed scheduler, "" when none is.
active() { sed -n 's/.*\[\(.*\)\].*/\1/p' "/sys/block/$1/queue/scheduler"; }
# prop DISK NAME: a property from the udev database.
prop() { udevadm info --query=property "/sys/class/block/$1" 2>/dev/null | sed -n "s/^$2=//p"; }

# nullb_new NAME ROTATIONAL QUEUES [ATTR=VALUE...]: a null_blk disk made
# through configfs with QUEUES submit queues and no poll queue (null_blk
# adds one by default, and two hardware queues make the kernel choose
# none). 7.x names the disk after the configfs directory, older kernels
# nullbN: prints the disk's name.
nullb_new() {
	d=/sys/kernel/config/nullb/$1
	mkdir "$d" || return 1
	echo "$2" >"$d/rotational"
	echo 0 >"$d/poll_queues"
	echo "$3" >"$d/submit_queues"
	echo 1024 >"$d/size" # MB; not memory backed, so it costs nothing
	shift 3
	for kv in "$@"; do echo "${kv#*=}" >"$d/${kv%%=*}" || return 1; done
	echo 1 >"$d/power" || return 1
	if [ -e "/sys/block/${d##*/}" ]; then echo "${d##*/}"; else echo "nullb$(cat "$d/index")"; fi
}

# count_start / count_stop: calls of elv_iosched_store (the scheduler
# write, and the queue freeze behind it) between the two, counted with the
# ftrace function profiler on all CPUs. Enabling the profiler resets it.
count_start() {
	echo elv_iosched_store >$T/set_ftrace_filter
	echo 1 >$T/function_profile_enabled
}
count_stop() {
	echo 0 >$T/function_profile_enabled
	cat $T/trace_stat/function* 2>/dev/null |
		awk '$1 == "elv_iosched_store" { n += $2 } END { print n + 0 }'
}

# rules_mask: hide the shipped rules (same name in /etc masks /usr/lib).
rules_mask() {
	ln -sf /dev/null $RULES/60-iosched.rules
	ln -sf /dev/null $RULES/99-iosched-run.rules
}
rules_unmask() { rm -f $RULES/60-iosched.rules $RULES/99-iosched-run.rules; }
reload() { udevadm control --reload; }

# now_ns: wall clock in nanoseconds.
now_ns() { date +%s%N; }

# median: the median of the numbers on stdin, one a line.
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
