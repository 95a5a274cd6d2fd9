# shellcheck shell=sh
# rootfs.sh: the one builder of the harness's root filesystems, in layers
# (base: debootstrap minbase of a suite plus packages; layer: a copy of a
# built tree plus packages apt-get installs in a chroot; image: a tree
# packed into ext4 without mounting it; test/vm/HARNESS.md, "Pieces"),
# each built once into the cache under a key that hashes its inputs. POSIX
# sh, sourced after test/lib/host.sh.
#
# An artefact is a directory OUT: rootfs_begin says whether it is built
# (else the caller builds into OUT.tmp), rootfs_commit moves OUT.tmp into
# place with its `done` record, so an interrupted build never leaves a
# tree that looks ready. A built tree is never modified: a layer copies it.
# Nothing of the host's apt configuration is read or changed: debootstrap
# fetches into the target, apt-get runs inside the chroot on the tree's
# own sources; the mirror is $MIRROR, else the system's (apt_mirror).

# rootfs_begin OUT: 0 when OUT is built. Otherwise waits for this
# artefact's lock (fd 9, OUT.lock, held until the caller exits: one
# builder an artefact, artefacts of other keys build side by side), then
# 0 when another caller built it meanwhile, else 1 with an empty OUT.tmp.
rootfs_begin() {
	[ ! -f "$1/done" ] || return 0
	mkdir -p "$(dirname "$1")"
	exec 9>"$1.lock"
	flock 9
	[ ! -f "$1/done" ] || return 0
	rootfs_unmount "$1.tmp"
	rm -rf "$1.tmp"
	mkdir -p "$1.tmp"
	return 1
}

# rootfs_commit OUT RECORD: OUT.tmp becomes OUT, RECORD (the inputs, in
# words) its `done` file with the date.
rootfs_commit() {
	echo "$(date -u +%FT%TZ) $2" >"$1.tmp/done"
	rm -rf "$1"
	mv "$1.tmp" "$1"
}

# rootfs_unmount DIR: lazily unmount whatever is mounted below DIR
# (debootstrap mounts proc and sys in its target while it works): rm -rf
# must never walk into a mount a failed run left behind.
rootfs_unmount() {
	awk -v d="$1/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r |
		while read -r _m; do umount -l "$_m" || true; done
}

# rootfs_base TREE SUITE PACKAGES: debootstrap SUITE (verified against
# debian-archive-keyring) with PACKAGES (words) into TREE, without the
# downloaded .debs and apt lists; the log beside TREE.
rootfs_base() {
	for _t in debootstrap mkfs.ext4; do
		command -v "$_t" >/dev/null || { log "$_t missing (scripts/install-deps installs it)"; return 1; }
	done
	[ -e "/usr/share/debootstrap/scripts/$2" ] || { log "debootstrap has no script for suite $2"; return 1; }
	_mirror=${MIRROR:-}
	# shellcheck disable=SC2119
	[ -n "$_mirror" ] || _mirror=$(apt_mirror) || return 1
	_log=$(dirname "$1")/debootstrap.log
	log "debootstrap $2 minbase + $3 (a few minutes)"
	if ! debootstrap --keyring=/usr/share/keyrings/debian-archive-keyring.gpg --variant=minbase \
		--include="$(echo "$3" | tr ' ' ,)" "$2" "$1" "$_mirror" >"$_log" 2>&1; then
		tail -n 30 "$_log" >&2
		[ ! -f "$1/debootstrap/debootstrap.log" ] || tail -n 30 "$1/debootstrap/debootstrap.log" >&2
		rootfs_unmount "$(dirname "$1")"
		log "debootstrap failed; log in $_log"
		return 1
	fi
	rootfs_unmount "$(dirname "$1")"
	rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*
}

# rootfs_copy BASE TREE: a copy of a built tree to add a layer to.
rootfs_copy() {
	log "copying $1"
	cp -a "$1" "$2"
}

# rootfs_chroot TREE CMD...: CMD inside TREE with a clean environment.
rootfs_chroot() {
	_r=$1
	shift
	chroot "$_r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@"
}

# rootfs_install TREE PACKAGES: apt-get install PACKAGES (words, without
# recommends) inside TREE from its own sources, with the host's resolver
# for the download and the tree's own file back after; no daemon starts
# (policy-rc.d), the lists and .debs are removed again. The log beside
# TREE.
rootfs_install() {
	_log=$(dirname "$1")/apt.log
	log "apt-get install $2 (chroot)"
	rm -f "$1.resolv.conf"
	[ ! -e "$1/etc/resolv.conf" ] && [ ! -L "$1/etc/resolv.conf" ] || cp -a "$1/etc/resolv.conf" "$1.resolv.conf"
	cp -L /etc/resolv.conf "$1/etc/resolv.conf.new"
	mv "$1/etc/resolv.conf.new" "$1/etc/resolv.conf"
	rootfs_no_daemons "$1"
	# shellcheck disable=SC2086 # one package a word
	if ! { rootfs_chroot "$1" apt-get update -qq && rootfs_chroot "$1" apt-get install -y -qq \
		--no-install-recommends $2; } >"$_log" 2>&1; then
		tail -n 30 "$_log" >&2
		log "apt-get install $2 failed; log in $_log"
		return 1
	fi
	rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*
	rm -f "$1/etc/resolv.conf"
	[ ! -e "$1.resolv.conf" ] && [ ! -L "$1.resolv.conf" ] || mv "$1.resolv.conf" "$1/etc/resolv.conf"
	rootfs_daemons "$1"
}

# rootfs_no_daemons TREE / rootfs_daemons TREE: forbid and allow again
# the start of services inside TREE (policy-rc.d) while packages install.
rootfs_no_daemons() {
	printf '#!/bin/sh\nexit 101\n' >"$1/usr/sbin/policy-rc.d"
	chmod 755 "$1/usr/sbin/policy-rc.d"
}
rootfs_daemons() { rm -f "$1/usr/sbin/policy-rc.d"; }

# rootfs_require TREE FILE...: fail here, not in a guest, when a package
# did not bring what the tests use (FILE relative to TREE).
rootfs_require() {
	_r=$1
	shift
	for _f in "$@"; do
		[ -e "$_r/$_f" ] || [ -L "$_r/$_f" ] || { log "$_f missing in $_r"; return 1; }
	done
}

# rootfs_pack TREE IMAGE SIZE LABEL: TREE as an ext4 image, without
# mounting anything (mkfs.ext4 -d).
rootfs_pack() {
	# mkfs.ext4 says "Creating regular file" on stdout even with -q; its
	# errors go to stderr.
	mkfs.ext4 -q -F -L "$4" -d "$1" "$2" "$3" >/dev/null
}
