# shellcheck shell=sh
# fio.sh: the stall benchmarks' fio job and the one reader of its JSON
# output (in awk: the guests have neither python nor jq, busybox awk there).
# POSIX sh, sourced: by bench/stall-host on the host and by
# test/vm/guest/stall-bench in the guest (test/vm/stall ships it as
# /iosched-test/fio.sh).

# fio_randread DEV SECS OUT [FIO-OPTION...]: the busy reader of both stall
# benchmarks, whose output fio_stats reads: 4 KiB random reads of DEV at
# queue depth 32 (libaio, O_DIRECT) for SECS seconds, the percentiles
# fio_stats takes, JSON into OUT; fio's own messages on stdout and stderr.
fio_randread() {
	_dev=$1 _secs=$2 _out=$3
	shift 3
	fio --name=stall --filename="$_dev" --rw=randread --bs=4k --iodepth=32 \
		--ioengine=libaio --direct=1 --time_based --runtime="$_secs" "$@" \
		--percentile_list=50:99:99.9 --output-format=json --output="$_out"
}

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
