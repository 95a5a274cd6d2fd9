# bash completion for iosched(8), installed as
# /usr/share/bash-completion/completions/iosched (loaded on demand by
# bash-completion). Self-contained: uses only COMP_WORDS and COMP_CWORD.
#
# Completes the command, its options, disk names from /sys/block, the
# schedulers the chosen disk offers (after a comma too, for a list), queue
# attribute names as ATTR=, rules files or directories for audit, and
# command names for help.

_iosched_disks() {
	local d
	for d in /sys/block/*; do
		[ -e "$d/queue/scheduler" ] && printf '%s\n' "${d##*/}"
	done
}

# _iosched_schedulers DEVICE: the names in queue/scheduler, brackets
# dropped, plus the alias and the modules the kernel loads on demand.
_iosched_schedulers() {
	local dev=${1##*/} line names
	line=$(cat "/sys/block/$dev/queue/scheduler" 2>/dev/null)
	read -ra names <<<"${line//[\[\]]/}"
	printf '%s\n' "${names[@]}" none mq-deadline deadline bfq kyber | sort -u
}

# The queue attributes `set` takes, written by `go generate
# ./helper/queueattr` from helper/queueattr, their one home.
_iosched_attrs="add_random discard_max_bytes io_timeout iostats iostats_passthrough max_sectors_kb nomerges nr_requests read_ahead_kb rotational rq_affinity stable_writes wbt_lat_usec write_cache"

_iosched() {
	local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}
	local i n=0 dev=""
	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		mapfile -t COMPREPLY < <(compgen -W "set udev status apply pin unpin audit probe help version --help --version" -- "$cur")
		return
	fi
	# Every command takes --help; flags may follow the positional arguments.
	if [[ $cur == -* && $cmd != set && $cmd != status && $cmd != apply && $cmd != probe && $cmd != audit ]]; then
		mapfile -t COMPREPLY < <(compgen -W "--help" -- "$cur")
		return
	fi
	case $cmd in
	set)
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "--dry-run --help --" -- "$cur")
			return
		fi
		# n: positional arguments before the one being completed (after
		# "--" every word is one).
		local dashdash=0
		for ((i = 2; i < COMP_CWORD; i++)); do
			if [ $dashdash -eq 0 ]; then
				[ "${COMP_WORDS[i]}" = -- ] && dashdash=1 && continue
				[[ ${COMP_WORDS[i]} == -* ]] && continue
			fi
			[ $n -eq 0 ] && dev=${COMP_WORDS[i]}
			n=$((n + 1))
		done
		if [ $n -eq 0 ]; then
			mapfile -t COMPREPLY < <(compgen -W "$(_iosched_disks)" -- "$cur")
		elif [[ $cur == *=* ]]; then
			return
		else
			local pre="" last=$cur
			if [[ $cur == *,* ]]; then
				pre=${cur%,*},
				last=${cur##*,}
			fi
			if [ $n -eq 1 ] || [ -n "$pre" ]; then
				# "keep" ends a list: offered after a comma only.
				mapfile -t COMPREPLY < <(compgen -P "$pre" -W "$(_iosched_schedulers "$dev")${pre:+ keep}" -- "$last")
			fi
			[ -n "$pre" ] && return
			mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -S = -W "$_iosched_attrs" -- "$cur")
			# Schedulers come first: a first ATTR= means no scheduler matched.
			[[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
		fi
		;;
	status)
		mapfile -t COMPREPLY < <(compgen -W "--check --json --format=table --format=json --format=prometheus --help" -- "$cur")
		;;
	apply)
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "--dry-run --help" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$(_iosched_disks)" -- "$cur")
		fi
		;;
	help)
		[ "$COMP_CWORD" -eq 2 ] && mapfile -t COMPREPLY < <(compgen -W "set udev status apply pin unpin audit probe help version" -- "$cur")
		;;
	audit)
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "--fix --dry-run --renamed-schedulers --undo --forget --help --" -- "$cur")
			return
		fi
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		;;
	probe)
		[ "${COMP_WORDS[COMP_CWORD - 1]}" = --runs ] && return
		mapfile -t COMPREPLY < <(compgen -W "--runs --help" -- "$cur")
		;;
	esac
}
complete -F _iosched iosched
