# shellcheck shell=sh
# The guest library of the VM harness (sourced, not run): busybox sh in the
# harness initramfs, the Debian root's sh under test/udev and test/pkg.
# Results go to stdout in the protocol of ktap.sh beside it (test/lib/ktap.sh:
# ok, fail, skip, check, diag, log, median, ktap_begin, ktap_end); the
# harness init adds the kernel log and the exit status.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# shellcheck source=test/lib/ktap.sh
. "${IOSCHED_LIB:-/iosched}/ktap.sh"

# param NAME DEFAULT: the value of iosched.NAME=VALUE on the kernel command
# line (the host passes each test's expectations there).
param() {
	_v=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^iosched\.$1=//p" | tail -n 1)
	echo "${_v:-$2}"
}

# active DISK: the bracketed (active) scheduler of DISK, "" if the file
# holds not exactly one bracketed name.
active() {
	_s=$(cat "/sys/block/$1/queue/scheduler")
	_n=$(echo "$_s" | tr ' ' '\n' | grep -c '^\[.*\]$')
	[ "$_n" -eq 1 ] || { echo ""; return; }
	echo "$_s" | tr ' ' '\n' | sed -n 's/^\[\(.*\)\]$/\1/p'
}

# setsched DISK NAME: write NAME, fail loudly if the write fails.
setsched() {
	echo "$2" >"/sys/block/$1/queue/scheduler" 2>/dev/null ||
		{ fail "write $2 to $1/queue/scheduler"; return 1; }
}

# nullb NAME [ATTR=VALUE...]: make a null_blk disk NAME through configfs
# (boot with null_blk.nr_devices=0, so the tests own every nullb disk).
# Functions here use _-prefixed variables: the callers' names stay theirs.
nullb() {
	_name=$1
	shift
	_d=/sys/kernel/config/nullb/$_name
	mkdir "$_d" || { fail "mkdir $_d"; return 1; }
	for _a in "$@"; do
		echo "${_a#*=}" >"$_d/${_a%%=*}" || { fail "$_name: set $_a"; return 1; }
	done
	echo 1 >"$_d/power" || { fail "$_name: power on"; return 1; }
	_i=0
	while [ ! -e "/sys/block/$_name" ] && [ $_i -lt 50 ]; do sleep 0.1; _i=$((_i + 1)); done
	[ -e "/sys/block/$_name" ] || { fail "$_name: no /sys/block/$_name"; return 1; }
	[ -b "/dev/$_name" ] || mknod "/dev/$_name" b "$(cut -d: -f1 "/sys/block/$_name/dev")" \
		"$(cut -d: -f2 "/sys/block/$_name/dev")"
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

# The ftrace function profiler counts calls of kernel functions on all CPUs.
T=/sys/kernel/tracing
# The queue freeze: 7.x wraps blk_mq_freeze_queue() (inline, with a
# memalloc scope) around blk_mq_freeze_queue_nomemsave(); 6.12 has only the
# former. "" when tracefs offers neither.
FREEZE_FN=
for _f in blk_mq_freeze_queue_nomemsave blk_mq_freeze_queue; do
	if grep -qx "$_f" $T/available_filter_functions 2>/dev/null; then
		FREEZE_FN=$_f
		break
	fi
done

# prof_ok: whether the profiler can count FREEZE_FN.
prof_ok() { [ -n "$FREEZE_FN" ] && [ -w "$T/function_profile_enabled" ]; }

# prof_start [FN...]: count calls of FN (default FREEZE_FN) from now on
# (restarting the profiler resets its counters).
prof_start() {
	[ $# -gt 0 ] || set -- "$FREEZE_FN"
	printf '%s\n' "$@" >$T/set_ftrace_filter
	echo 0 >$T/function_profile_enabled
	echo 1 >$T/function_profile_enabled
}

# prof_stop: stop counting. prof_count [FN]: the calls of FN (default
# FREEZE_FN) counted between prof_start and prof_stop.
prof_stop() { echo 0 >$T/function_profile_enabled; }
# shellcheck disable=SC2120 # guest/kernels passes FN
prof_count() {
	cat $T/trace_stat/function* 2>/dev/null |
		awk -v f="${1:-$FREEZE_FN}" '$1 == f { s += $2 } END { print s + 0 }'
}

# wr FILE VALUE: one write(2) of VALUE (no newline, as swtime writes) to
# FILE; prints "ok" or the error name, as swtime counts it.
wr() {
	_out=$(swtime -n 1 -- "$1" "$2")
	if [ "$(field ok "$_out")" = 1 ]; then echo ok
	elif [ "$(field einval "$_out")" = 1 ]; then echo EINVAL
	else echo "error($_out)"; fi
}

# freezes FILE VALUE: write VALUE once and print how many times the queue
# was frozen meanwhile ("-" when the profiler is not available), or the
# error name when the write failed.
freezes() {
	if prof_ok; then
		prof_start
		_r=$(wr "$1" "$2")
		prof_stop
		_n=$(prof_count)
	else
		_r=$(wr "$1" "$2")
		_n=-
	fi
	[ "$_r" = ok ] || { echo "$_r"; return; }
	echo "$_n"
}

# bench_op OP KIND SWTIME-ARGS...: N (iosched.n, default 20) timed writes
# by swtime, the queue freezes they took (function profiler) and the
# modprobe runs they caused (the initramfs's /sbin/modprobe logs its calls),
# as one line test/vm/series reads:
#   # bench OP kind=KIND median_ns=N writes=N ok=N freezes=N modprobe=N
# KIND: unchanged (a write of what the file holds), changed, or control (an
# unchanged write whose store never freezes on the kernel it is meant for:
# the yardstick of the 3x target). freezes is "-" without the profiler.
bench_op() {
	_op=$1 _kind=$2
	shift 2
	_n=$(param n 20)
	prof_ok && prof_start
	rm -f /tmp/modprobe.log
	_out=$(swtime -n "$_n" "$@")
	_fr=-
	prof_ok && { prof_stop; _fr=$(prof_count); }
	_mp=0
	[ -f /tmp/modprobe.log ] && _mp=$(wc -l </tmp/modprobe.log)
	diag "bench $_op kind=$_kind median_ns=$(field median_ns "$_out") writes=$(field n "$_out") ok=$(field ok "$_out") freezes=$_fr modprobe=$_mp"
	check "$_op: writes that succeeded" "$_n" "$(field ok "$_out")"
}

# bench_pair OP KIND CONTROL CONTROL-FILE CONTROL-VALUE SWTIME-ARGS...: OP
# timed against CONTROL (an unchanged write of CONTROL-VALUE to
# CONTROL-FILE) in R alternating rounds (iosched.rounds, default 7) of K
# writes each (iosched.round_writes, default 10): odd rounds time OP
# first, even rounds CONTROL first. A microsecond store's cost under TCG
# drifts with the phase of the boot by up to 3x, the margin the host checks,
# so the ratio is taken within each round, where both ran moments apart.
# One line, bench_op's fields over OP's R*K writes (freezes and modprobe
# runs counted over OP's writes only) plus the pairing:
#   # bench OP kind=KIND median_ns=N writes=N ok=N freezes=N modprobe=N paired=CONTROL rounds=R ratio=X
# ratio: the median over the rounds of OP's median / CONTROL's median.
bench_pair() {
	_op=$1 _kind=$2 _cop=$3 _cf=$4 _cv=$5
	shift 5
	_r=$(param rounds 7) _k=$(param round_writes 10)
	_i=0 _ok=0 _fr=0 _mp=0
	prof_ok || _fr=-
	: >/tmp/pair.ns
	: >/tmp/pair.ratio
	while [ "$_i" -lt "$_r" ]; do
		_i=$((_i + 1))
		[ $((_i % 2)) = 1 ] || _c=$(swtime -n "$_k" "$_cf" "$_cv")
		prof_ok && prof_start
		rm -f /tmp/modprobe.log
		_out=$(swtime -v -n "$_k" "$@")
		prof_ok && { prof_stop; _fr=$((_fr + $(prof_count))); }
		[ ! -f /tmp/modprobe.log ] || _mp=$((_mp + $(wc -l </tmp/modprobe.log)))
		[ $((_i % 2)) = 0 ] || _c=$(swtime -n "$_k" "$_cf" "$_cv")
		echo "$_out" | sed 1d >>/tmp/pair.ns
		_ok=$((_ok + $(field ok "$_out")))
		[ "$(field ok "$_c")" = "$_k" ] || fail "$_op: round $_i: not every $_cop write succeeded: $_c"
		awk -v a="$(field median_ns "$_out")" -v b="$(field median_ns "$_c")" \
			'BEGIN { if (b > 0) printf "%.4f\n", a / b }' >>/tmp/pair.ratio
	done
	# The median over every write, in whole nanoseconds.
	_med=$(median </tmp/pair.ns | awk '{ printf "%d\n", $1 }')
	diag "bench $_op kind=$_kind median_ns=$_med writes=$(wc -l </tmp/pair.ns) ok=$_ok freezes=$_fr modprobe=$_mp paired=$_cop rounds=$(wc -l </tmp/pair.ratio) ratio=$(median </tmp/pair.ratio)"
	check "$_op: writes that succeeded" $((_r * _k)) "$_ok"
}
