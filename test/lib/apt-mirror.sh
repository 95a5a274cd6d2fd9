# shellcheck shell=sh
# apt-mirror.sh: the Debian mirror this machine's own apt uses, and a
# private apt configuration on it: the one way the harness fetches Debian
# packages without debootstrap (test/vm/fetch-kernel's source trees,
# test/boot/fetch-debian-kernel's kernel package). POSIX sh, sourced after
# test/lib/ktap.sh (log).
#
# apt_mirror prints the base URI of the first "deb" entry of the Debian
# archive in the system's apt sources (/etc/apt/sources.list and
# sources.list.d/*.list and *.sources, deb822 included), in apt's own
# order: `apt-get indextargets` parses them exactly as apt-get does. An
# entry counts when its Release file, already fetched by the system's
# `apt-get update`, says "Label: Debian" (so not Debian-Security, not a
# third-party repository); without lists, when its suite is a Debian
# codename or alias from distro-info-data and not a -security suite.
# Arguments are passed to apt-get (-o options: a test points them at its
# own sources). Exits 1, with a message, when no entry qualifies.

# shellcheck disable=SC2120 # the arguments are for its test
apt_mirror() {
	_names=
	if [ -r /usr/share/distro-info/debian.csv ]; then
		_names=$(cut -d, -f3 /usr/share/distro-info/debian.csv | tail -n +2 | tr '\n' ' ')
	fi
	_names="$_names stable testing unstable oldstable oldoldstable experimental"
	# One line a target (apt's own field names, not shell expansions): repository URI, suite, lists file of its Packages.
	# shellcheck disable=SC2016
	apt-get "$@" indextargets --no-release-info --format '$(CREATED_BY) $(TARGET_OF) $(REPO_URI) $(RELEASE) $(FILENAME)' \
		2>/dev/null | while read -r _by _of _uri _suite _file; do
		[ "$_by" = Packages ] && [ "$_of" = deb ] || continue
		case $_suite in *-security | */updates) continue ;; esac
		# The Release file sits beside the Packages file in the lists
		# directory: same escaped prefix, then dists_SUITE_.
		_rel=${_file%%_dists_*}_dists_$(echo "$_suite" | tr / _)_
		_label=
		for _f in "${_rel}InRelease" "${_rel}Release"; do
			[ -r "$_f" ] || continue
			_label=$(sed -n 's/^Label: //p' "$_f" | head -n 1)
			break
		done
		if [ -n "$_label" ]; then
			[ "$_label" = Debian ] || continue
		else
			case " $_names " in *" ${_suite%%-*} "*) ;; *) continue ;; esac
		fi
		echo "${_uri%/}"
		return 0
	done | head -n 1 | grep . || {
		echo "apt-mirror: no Debian archive entry in the system's apt sources; set the mirror variable" >&2
		return 1
	}
}

# apt_suite SUITE [MIRROR]: a private apt configuration for SUITE of MIRROR
# (default: apt_mirror's) under $CACHE/apt/SUITE (its own sources file,
# lists and caches; the system's apt state is never read or written
# through it), held by this
# process alone until it exits (a lock on fd 8: on a cold cache `make test`
# asks for the same suite from several runners, and apt runs here without
# its own locks). Its lists are refreshed at most once a day: a failed
# update keeps the lists already cached. Sets APTOPTS, the options every
# apt_get and apt_cache call takes.
apt_suite() {
	_a=${CACHE:?}/apt/$1
	_m=${2:-}
	[ -n "$_m" ] || _m=$(apt_mirror) || return 1
	mkdir -p "$_a/lists/partial" "$_a/cache/archives/partial"
	exec 8>"$_a/.lock"
	flock 8
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $_m $1 main" >"$_a/sources.list.tmp"
	mv "$_a/sources.list.tmp" "$_a/sources.list"
	APTOPTS="-o Dir::Etc::SourceList=$_a/sources.list -o Dir::Etc::SourceParts=-
 -o Dir::State::Lists=$_a/lists -o Dir::Cache=$_a/cache
 -o Dir::State::status=/dev/null -o APT::Get::List-Cleanup=0
 -o Debug::NoLocking=1 -o APT::Sandbox::User=root"
	[ -z "$(find "$_a/lists/.updated" -mmin -1440 2>/dev/null)" ] || return 0
	log "apt-get update ($1)"
	# shellcheck disable=SC2086
	if apt-get $APTOPTS -qq update >&2; then
		touch "$_a/lists/.updated"
	else
		log "apt-get update ($1) failed: using the lists already cached"
	fi
}

# apt_get ARGS...: apt-get in the configuration apt_suite made.
# shellcheck disable=SC2086
apt_get() { apt-get $APTOPTS "$@"; }

# apt_cache ARGS...: apt-cache in the configuration apt_suite made.
# shellcheck disable=SC2086
apt_cache() { apt-cache $APTOPTS "$@"; }
