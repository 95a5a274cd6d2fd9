# shellcheck shell=sh
# apt-mirror.sh: the Debian mirror this machine's own apt uses.
# Sourced by test/vm/fetch-kernel and test/vm/mkrootfs (POSIX sh).
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
