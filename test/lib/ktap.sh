# shellcheck shell=sh
# ktap.sh: the one result protocol of the test harness, in kselftest's
# KTAP form, and what guests and host runners share (log, median). POSIX
# sh, sourced: by guest scripts under busybox sh (the harness initramfs
# carries it as /iosched/ktap.sh) and by every host runner.
# test/vm/HARNESS.md ("The result protocol") gives the lines a test
# prints, how a test script uses this, and when ktap_tally, the only
# place results are counted, fails a run.
# Functions here use _-prefixed variables: the callers' names stay theirs.

KTAP_N=0 KTAP_PASSED=0 KTAP_FAILED=0 KTAP_SKIPPED=0 SKIP_REASONS=""

# log MSG...: a timestamped diagnostic on stderr, named by PROG (default:
# the script's name).
log() { echo "# ${PROG:-${0##*/}}: $(date -u +%H:%M:%S) $*" >&2; }

# diag MSG...: a diagnostic line on stdout, part of the test's output.
diag() { echo "# $*"; }

# ok NAME / fail NAME / skip NAME REASON: one result line each.
ok() {
	KTAP_N=$((KTAP_N + 1)) KTAP_PASSED=$((KTAP_PASSED + 1))
	echo "ok $KTAP_N $*"
}
fail() {
	KTAP_N=$((KTAP_N + 1)) KTAP_FAILED=$((KTAP_FAILED + 1))
	echo "not ok $KTAP_N $*"
}
skip() {
	KTAP_N=$((KTAP_N + 1)) KTAP_SKIPPED=$((KTAP_SKIPPED + 1))
	echo "ok $KTAP_N $1 # SKIP $2"
}

# check NAME WANT GOT: ok "NAME: GOT" when GOT is WANT, else not ok naming
# both; values of more than one line go to diagnostics (a result is a line).
check() {
	case $2$3 in
	*"
"*)
		if [ "$2" = "$3" ]; then ok "$1"; return; fi
		fail "$1"
		printf '%s\n' "$2" | sed 's/^/# want| /'
		printf '%s\n' "$3" | sed 's/^/# got | /'
		;;
	*) if [ "$2" = "$3" ]; then ok "$1: $3"; else fail "$1: want '$2', got '$3'"; fi ;;
	esac
}

# check_run NAME CMD...: ok when CMD exits 0; else not ok with its status,
# and the last 20 lines of its output as diagnostics.
check_run() {
	_name=$1
	shift
	_rc=0
	_out=$("$@" 2>&1) || _rc=$?
	if [ "$_rc" -eq 0 ]; then
		ok "$_name"
		return 0
	fi
	fail "$_name: exit status $_rc"
	printf '%s\n' "$_out" | tail -n 20 | sed 's/^/# | /'
	return 1
}

# have_program NAME... / have_path PATH...: for requires(): each one
# missing adds a reason to SKIP_REASONS.
have_program() {
	for _p in "$@"; do
		command -v "$_p" >/dev/null 2>&1 || SKIP_REASONS="${SKIP_REASONS:+$SKIP_REASONS; }no program $_p"
	done
}
have_path() {
	for _p in "$@"; do
		[ -e "$_p" ] || SKIP_REASONS="${SKIP_REASONS:+$SKIP_REASONS; }no $_p"
	done
}

# ktap_begin: the header and DESCRIPTION; then the test's requires(), if
# it defines one: with a reason in SKIP_REASONS the whole test is one
# skipped result and ends here (a run that tested nothing: it fails).
ktap_begin() {
	echo "KTAP version 1"
	[ -z "${DESCRIPTION:-}" ] || diag "$DESCRIPTION"
	if type requires >/dev/null 2>&1; then
		requires
		if [ -n "$SKIP_REASONS" ]; then
			skip "${0##*/}" "$SKIP_REASONS"
			ktap_end
		fi
	fi
}

# ktap_end: the plan line and the exit: 0 when a check passed and none
# failed, else 1.
ktap_end() {
	echo "1..$KTAP_N"
	log "$KTAP_PASSED passed, $KTAP_FAILED failed, $KTAP_SKIPPED skipped"
	[ "$KTAP_FAILED" -eq 0 ] && [ "$KTAP_PASSED" -gt 0 ] && exit 0
	exit 1
}

# KERNEL_REPORTS: the one list of what in a kernel log fails a run (an
# extended regular expression): WARN and BUG (KASAN, UBSAN, sleeping in
# atomic context, soft lockups report as BUG: too), oopses, lockdep
# (its reports open with WARNING: or INFO:, "possible circular locking",
# and end with "turning off the locking correctness validator"), hung
# tasks and RCU stalls (INFO:), panics, and any call trace.
KERNEL_REPORTS='WARNING:|BUG:|kernel BUG|INFO: |Oops|general protection fault|Kernel panic|KASAN|UBSAN|possible circular locking|locking correctness validator|rcu.*detected stall|blocked for more than|Call Trace'

# ktap_guest CMD...: what a guest's init does around its test: runs CMD,
# then prints the kernel log (DMESG, default dmesg) as "# dmesg: " lines
# and "# exit=N", CMD's status (or 1 when the kernel log could not be
# read). Returns that status.
ktap_guest() {
	_rc=0
	"$@" || _rc=$?
	_dm=$(${DMESG:-dmesg} 2>&1) || { echo "# cannot read the kernel log"; [ "$_rc" -ne 0 ] || _rc=1; }
	printf '%s\n' "$_dm" | sed 's/^/# dmesg: /'
	echo "# exit=$_rc"
	return "$_rc"
}

# ktap_tally NAME FILE [STATUS]: the verdict on one test's output in FILE
# (a guest's console or a runner's stdout), as one result line of the
# caller's own output: ok NAME or not ok NAME. STATUS, when given, is the
# exit status of what wrote FILE (else FILE's "# exit=N" line is). Prints
# the failed and skipped checks, the reasons and any kernel report to
# stderr; returns 1 when the run failed (the rules at the top).
ktap_tally() {
	_name=$1 _file=$2 _status=${3:-}
	[ -z "$_status" ] || case $_status in *[!0-9]*) _status=255 ;; esac
	_v=$(tr -d '\r' <"$_file" 2>/dev/null | awk -v st="$_status" -v name="$_name" -v re="$KERNEL_REPORTS" '
		function say(s) { print "#   " name ": " s }
		/^ok [0-9]+ / {
			n++
			if ($0 ~ /# [Ss][Kk][Ii][Pp]/) { skipped++; say($0) } else passed++
			next
		}
		/^not ok [0-9]+ / { n++; failed++; say($0); next }
		/^1\.\.[0-9]+/ { plan = $1; sub(/^1\.\./, "", plan); next }
		/^# exit=[0-9]+$/ { ex = substr($0, 8); next }
		/^# dmesg: / { l = substr($0, 10); if (l ~ re) { reports++; if (reports <= 20) say("kernel: " l) } }
		END {
			why = ""
			if (failed) why = why "; " failed " failed"
			if (!passed) why = why "; no check passed"
			if (plan == "") why = why "; no plan line"
			else if (plan + 0 != n) why = why "; plan 1.." plan " for " n " results"
			if (st == "") st = ex
			if (st == "") why = why "; no exit status"
			else if (st + 0 != 0) why = why "; exit status " st
			if (reports) why = why "; kernel reports: " reports " line(s)"
			printf "%d passed, %d failed, %d skipped%s\n", passed, failed, skipped, why
		}')
	# Every line but the last (the counts) is a detail for stderr.
	printf '%s\n' "$_v" | sed '$d' >&2
	_v=$(printf '%s\n' "$_v" | tail -n 1)
	case $_v in
	*\;*)
		log "$_name: FAILED: $_v (see $_file)"
		fail "$_name"
		return 1
		;;
	esac
	log "$_name: $_v"
	ok "$_name"
}

# ktap_subtest NAME CMD...: CMD, a test of its own, as one result of this
# one: its lines indented by four spaces (KTAP's subtest form, which no
# tally counts), then ok or not ok NAME, ktap_tally's verdict on them and
# its exit status.
ktap_subtest() {
	_sub=$1
	shift
	# A file of its own: the subshells of one runner share its $$.
	_subf=$(mktemp "${TMPDIR:-/tmp}/ktap-sub.XXXXXX")
	{
		_rc=0
		"$@" 2>&1 || _rc=$?
		echo "# exit=$_rc"
	} | tee "$_subf" | sed 's/^/    /'
	_rc=0
	ktap_tally "$_sub" "$_subf" || _rc=1
	rm -f "$_subf"
	return "$_rc"
}

# diag_lines FILE WORD: the diagnostics "# WORD ..." of FILE, without "# ".
diag_lines() { tr -d '\r' <"$1" | sed -n "s/^# \\($2 \\)/\\1/p"; }

# median: the median of the numbers on stdin, one a line (the mean of the
# middle two for an even count, to 15 digits: print's 6 would make a
# nanosecond median 1.17771e+07); status 1 when there is none.
median() {
	sort -n | awk '{ v[NR] = $1 }
	END { if (NR == 0) exit 1; printf "%.15g\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
