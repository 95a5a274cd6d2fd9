# shellcheck shell=sh
# fio.sh: the one reader of fio's JSON output (--output-format=json), in
# awk because the guests have neither python nor jq (busybox awk there).
# POSIX sh, sourced: by bench/stall-host on the host and by
# test/vm/guest/stall-bench in the guest (test/vm/stall ships it as
# /iosched-test/fio.sh).

# fio_stats FILE: fio's reads from its JSON output in FILE, one line:
# "ios=N p50=NS p99=NS p999=NS max=NS" (completion latency in ns: the
# percentiles of --percentile_list=50:99:99.9 and the longest). The read
# section comes first; its clat_ns holds the percentiles asked for.
# Status 1 when FILE holds no read latency.
fio_stats() {
	awk '/"read" : \{/ && !seen { inr = 1; seen = 1 }
	inr && /"total_ios"/ { ios = $3 }
	inr && /"clat_ns"/ { inc = 1 }
	inc && /"max"/ && mx == "" { mx = $3 }
	inc && /"50.000000"/ { p50 = $3 }
	inc && /"99.000000"/ { p99 = $3 }
	inc && /"99.900000"/ { p999 = $3; inc = 0; inr = 0 }
	END {
		gsub(/,/, "", ios); gsub(/,/, "", mx); gsub(/,/, "", p50); gsub(/,/, "", p99)
		if (p999 == "" || ios == "") exit 1
		printf "ios=%s p50=%s p99=%s p999=%s max=%s\n", ios, p50, p99, p999, mx
	}' "$1"
}
