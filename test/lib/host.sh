# shellcheck shell=sh
# host.sh: what every host-side driver of the VM harness shares (POSIX sh,
# sourced): the result protocol and its tally (ktap.sh), cache keys, the
# guest slot and the qemu launcher, the statistics of a benchmark and its targets. The caller
# sets TOP (the repository) and PROG (its name in log lines).

# shellcheck source=test/lib/ktap.sh
. "$TOP/test/lib/ktap.sh"

# CACHE: where every expensive artefact is kept (kernel trees and builds,
# root filesystems, images), shared by every run and checkout; the one
# home of its default.
CACHE=${CACHE:-/var/cache/iosched-test}
export CACHE

# qemu_version: qemu-system-x86_64's version, for the documents the
# benchmarks write.
qemu_version() { qemu-system-x86_64 --version | head -n 1 | sed 's/^QEMU emulator version //'; }

# hash: the first 16 hex digits of the SHA-256 of stdin (cache keys).
hash() { sha256sum | cut -c1-16; }

# guest_slot_take / guest_slot_drop: at most one qemu guest per two CPUs
# of this machine. Every guest is TCG with -smp 2; on the 2-CPU machine a
# boot alone took 58 s, two side by side 131 s each (a vCPU that holds a
# lock waits for a CPU while the other spins), so the targets `make test`
# runs side by side queue here and go on with their host work meanwhile.
# The slot is fd 7 on a lock file: qemu inherits it, so the slot stays
# taken for as long as the guest lives. GUEST_LOCK names the files.
GUEST_LOCK=${GUEST_LOCK:-/run/lock/iosched-guest}
guest_slot_take() {
	_slots=$(($(nproc) / 2))
	[ "$_slots" -ge 1 ] || _slots=1
	if [ "$_slots" -eq 1 ]; then
		exec 7>>"$GUEST_LOCK.0"
		flock 7
		return
	fi
	while :; do
		_s=0
		while [ "$_s" -lt "$_slots" ]; do
			exec 7>>"$GUEST_LOCK.$_s"
			flock -n 7 && return
			_s=$((_s + 1))
		done
		exec 7>&-
		sleep 1
	done
}
guest_slot_drop() { exec 7>&-; }
# guest_nice: the niceness a guest's qemu runs at: -10 as root, else 0.
# The guests, one after another, are what a parallel `make test` waits
# for; the host work beside them (fuzzing, chroots, package builds) fills
# the CPU time they leave. At the same priority that work slowed each
# guest 1.5-2x (a series guest 36 s alone, 67 s there), at -5 still
# 1.3-1.5x (a boot 48 s alone, 70 s there).
guest_nice() { if [ "$(id -u)" -eq 0 ]; then echo -10; else echo 0; fi; }

# guest_clock: qemu's accelerator options for the guest's clock, by
# GUEST_CLOCK. "wall" (the default): TCG with a host thread per vCPU, and
# the guest's clock is the host's, so every time a guest measures moves
# with the host's load (boot to boot about 30%, docs/testing.md). "icount":
# one host thread runs both vCPUs in turn and the guest's clock counts the
# instructions they execute (shift=0: 1 ns each), jumping to the next
# timer when both are idle (sleep=off): a time measured in the guest is
# the work done on the way, whatever else keeps the host's CPUs busy; only
# waits for the host's I/O still stretch it. The timing benchmarks use it
# (test/boot/bootbench, scale's helper boot); the tests keep "wall", where
# vCPUs racing in parallel is the point.
guest_clock() {
	case ${GUEST_CLOCK:-wall} in
	wall) echo "-accel tcg" ;;
	icount) echo "-accel tcg,thread=single -icount shift=0,sleep=off" ;;
	*)
		echo "GUEST_CLOCK=$GUEST_CLOCK: want wall or icount" >&2
		return 2
		;;
	esac
}

# guest_boot DIR TIMEOUT QEMU-ARGS...: the one way the harness runs a qemu
# guest (test/vm/run, test/boot/run): qemu-system-x86_64 under TCG with
# -smp 2 and guest_clock's clock, no display, no reboot, the serial
# console in DIR/console.log, plus the caller's kernel, memory, disks and
# command line. The guest waits for its turn of the slots
# (guest_slot_take) and runs at guest_nice; qemu runs in the background
# so that the timeout (TIMEOUT seconds from when the slot is ours) stops
# exactly this process, by its PID. Writes DIR/results, the console without the serial line's carriage
# returns, for the caller's ktap_tally. Returns 1 when the guest timed out
# (the console's tail on stderr), else 0: the verdict is the tally's.
guest_boot() {
	_dir=$1 _timeout=$2
	shift 2
	_clock=$(guest_clock) || return 1
	guest_slot_take
	_start=$(date +%s)
	# shellcheck disable=SC2086 # guest_clock's options are words of their own
	nice -n "$(guest_nice)" qemu-system-x86_64 -nodefaults -no-user-config -machine pc $_clock \
		-smp 2 -display none -no-reboot -serial "file:$_dir/console.log" \
		"$@" </dev/null >"$_dir/qemu.log" 2>&1 &
	_qpid=$! _timedout=0
	while kill -0 "$_qpid" 2>/dev/null; do
		if [ $(($(date +%s) - _start)) -ge "$_timeout" ]; then
			log "$_dir: timeout after ${_timeout}s: killing qemu (pid $_qpid)"
			kill "$_qpid" 2>/dev/null || true
			_timedout=1
			break
		fi
		sleep 1
	done
	_qrc=0
	wait "$_qpid" || _qrc=$?
	guest_slot_drop
	log "$_dir: qemu ran $(($(date +%s) - _start)) s (status $_qrc)"
	tr -d '\r' <"$_dir/console.log" >"$_dir/results"
	[ "$_timedout" -ne 0 ] || return 0
	log "$_dir: guest timed out (console tail follows)"
	tail -n 40 "$_dir/results" | sed 's/^/  | /' >&2
	return 1
}

# boot_time FIELD RESULTS...: FIELD (multi_user_s, root_s, ...) from the
# "# time" line of each boot's results (test/boot/guest/collect), one a line.
boot_time() {
	_fld=$1
	shift
	cat "$@" 2>/dev/null | sed -n "s/^# time .* $_fld=\([0-9.]*\).*/\1/p"
}

# boot_verdict RESULTS: one boot's verdict by the protocol's own tally, in
# words: "passed", else "FAILED: " and the failed checks, else the first
# kernel report, else the tally's reasons (a boot cut short).
boot_verdict() {
	_why=$( (ktap_tally boot "$1") 2>&1 >/dev/null) && { echo passed; return; }
	_f=$(sed -n 's/^not ok [0-9]* //p' "$1" | cut -d: -f1 | cut -c1-40 | sort -u | paste -sd ';')
	# Kernel log lines: the collector's "# dmesg: [ T] ...", or a guest's
	# raw console when it died before its collector ran.
	[ -n "$_f" ] || _f=$(sed -n 's/^.*\[ *[0-9]*\.[0-9]*\] //p' "$1" | grep -E -m 1 "$KERNEL_REPORTS" | cut -c1-60 | sed 's/^/kernel report: /')
	[ -n "$_f" ] || _f=$(echo "$_why" | sed -n 's/.*: FAILED: [^;]*; \(.*\) (see .*/\1/p' | tail -n 1)
	echo "FAILED: $_f"
}

# series_dir SERIES KERNEL: the directory of SERIES' patches for KERNEL
# (MAJOR.MINOR): its variant kernel-patches/SERIES-KERNEL/ where there is
# one, else kernel-patches/SERIES/ (the caller sets TOP).
series_dir() {
	if [ -d "$TOP/kernel-patches/$1-$2" ]; then echo "$TOP/kernel-patches/$1-$2"
	else echo "$TOP/kernel-patches/$1"; fi
}

# series_list: every kernel series, one a line: the directories of
# kernel-patches/ whose config names the KERNELS they apply to (a variant,
# SERIES-KERNEL/, only overrides its series').
series_list() {
	for _c in "$TOP"/kernel-patches/*/config; do
		! grep -q '^KERNELS=' "$_c" || basename "$(dirname "$_c")"
	done
}

# series_conf SERIES VAR: VAR as SERIES' config sets it.
series_conf() { (. "$TOP/kernel-patches/$1/config" && eval "echo \"\${$2:-}\""); }

# series_patches DIR: the patch files DIR/series names, in order, one a
# line (comments and blank lines skipped).
series_patches() { grep -v '^[[:space:]]*\(#\|$\)' "$1/series" | sed "s|^|$1/|"; }

# ms NS: nanoseconds as milliseconds, 2 decimals from 0.1 ms, else 4.
ms() { awk -v ns="$1" 'BEGIN { v = ns / 1e6; if (v >= 0.1) printf "%.2f", v; else printf "%.4f", v }'; }

# ratio A B: A / B with one decimal ("-" when B is 0 or empty).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "-"; else printf "%.1f", a / b }'; }

# doc_section DOC NAME: the lines of DOC between "<!-- NAME:begin -->" and
# "<!-- NAME:end -->" replaced by stdin. A benchmark's document keeps its
# prose where a reader edits it, and the benchmark rewrites only what it
# measured; status 1 when DOC has no such section.
doc_section() {
	_sec=$(mktemp "${TMPDIR:-/tmp}/doc.XXXXXX")
	cat >"$_sec"
	if grep -qx "<!-- $2:begin -->" "$1" && grep -qx "<!-- $2:end -->" "$1"; then
		awk -v f="$_sec" -v b="<!-- $2:begin -->" -v e="<!-- $2:end -->" '
			$0 == b { print; while ((getline l < f) > 0) print l; skip = 1; next }
			$0 == e { skip = 0 }
			!skip' "$1" >"$1.tmp" && mv "$1.tmp" "$1"
		rm -f "$_sec"
		return
	fi
	rm -f "$_sec"
	log "$1: no section $2 (<!-- $2:begin --> ... <!-- $2:end -->)"
	return 1
}

# targets_init FILE: start a list of benchmark targets in FILE.
# target DESCRIPTION AWK-CONDITION: note whether the target is met (callable
# from a pipeline's subshell: the list is a file).
# targets_report: each target as a result (ok, fail) of the caller's output.
targets_init() { TARGETS_FILE=$1; : >"$TARGETS_FILE"; }
target() {
	if awk "BEGIN { exit !($2) }" </dev/null; then echo "ok $1" >>"$TARGETS_FILE"
	else echo "fail $1" >>"$TARGETS_FILE"; fi
}
targets_report() {
	while read -r _how _what; do "$_how" "$_what"; done <"$TARGETS_FILE"
}
