# shellcheck shell=sh
# Guest helpers of the limits series' tests (sourced after /iosched/lib.sh;
# put at /iosched/limits-lib.sh by test/vm/limits/run).

T=/sys/kernel/tracing
# The freeze every queue-limit commit and every base wbt_lat_usec write
# takes: blk_mq_freeze_queue() is an inline wrapper around it.
FREEZE_FN=blk_mq_freeze_queue_nomemsave

# prof_ok: whether the ftrace function profiler can count FREEZE_FN.
prof_ok() {
	[ -w "$T/function_profile_enabled" ] && grep -qx "$FREEZE_FN" "$T/available_filter_functions" 2>/dev/null
}

# prof_start: count calls of FREEZE_FN from now on (restarting the
# profiler resets its counters).
prof_start() {
	echo "$FREEZE_FN" >"$T/set_ftrace_filter"
	echo 0 >"$T/function_profile_enabled"
	echo 1 >"$T/function_profile_enabled"
}

# prof_stop: print the calls of FREEZE_FN since prof_start (all CPUs).
prof_stop() {
	echo 0 >"$T/function_profile_enabled"
	cat "$T"/trace_stat/function* 2>/dev/null |
		awk -v f="$FREEZE_FN" '$1 == f { s += $2 } END { print s + 0 }'
}

# wr FILE VALUE: one write(2) of VALUE (no newline, as swtime writes) to
# FILE; prints "ok" or the error name, as swtime counts it.
wr() {
	out=$(swtime -n 1 -- "$1" "$2")
	if [ "$(field ok "$out")" = 1 ]; then echo ok
	elif [ "$(field einval "$out")" = 1 ]; then echo EINVAL
	else echo "error($out)"; fi
}

# freezes FILE VALUE: write VALUE once and print how many times the queue
# was frozen meanwhile ("-" when the profiler is not available).
freezes() {
	if prof_ok; then
		prof_start
		r=$(wr "$1" "$2")
		n=$(prof_stop)
	else
		r=$(wr "$1" "$2")
		n=-
	fi
	[ "$r" = ok ] || { echo "$r"; return; }
	echo "$n"
}
