# shellcheck shell=sh
# kbuild.sh: configure and build a kernel from a tree fetched by
# test/vm/fetch-kernel, objects in an O= directory (POSIX sh, sourced).
# The caller sets SRC (the tree) and JOBS, and sources test/lib/ktap.sh
# (log). Used by test/vm/build-kernels and test/boot/build-kernel.

# kmake DIR ARGS...: make in the shared tree with its objects in DIR.
kmake() { _b=$1; shift; make -s -C "$SRC" O="$_b" ARCH=x86_64 "$@"; }

# kconfigure DIR FRAGMENT...: tinyconfig + fragments, olddefconfig, then
# check that every option the fragments ask for survived (Kconfig drops an
# option whose dependencies are missing without a word). A later fragment
# overrides an earlier one, as merge_config.sh merges them: the last
# CONFIG_X=y, =m or "# CONFIG_X is not set" of each option is checked.
# Returns 1 and names each dropped option when one is; done once a
# directory.
kconfigure() {
	_b=$1; shift
	[ -f "$_b/.config.checked" ] && return 0
	log "configuring $_b"
	mkdir -p "$_b"
	kmake "$_b" tinyconfig >/dev/null
	(cd "$SRC" && scripts/kconfig/merge_config.sh -m -O "$_b" "$_b/.config" "$@" >/dev/null)
	kmake "$_b" olddefconfig >/dev/null
	_bad=0
	for _want in $(sed -n -e 's/^\(CONFIG_[A-Z0-9_]*=[ym]\)$/\1/p' \
		-e 's/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1=n/p' "$@" |
		awk -F= '!($1 in v) { o[n++] = $1 } { v[$1] = $2 } END { for (i = 0; i < n; i++) print o[i] "=" v[o[i]] }'); do
		case $_want in
		*=n) ! grep -q "^${_want%=n}=" "$_b/.config" || { log "${_want%=n} is set in .config"; _bad=1; } ;;
		*) grep -qx "$_want" "$_b/.config" || { log "$_want missing from .config"; _bad=1; } ;;
		esac
	done
	[ $_bad -eq 0 ] || { log "configuration of $_b is wrong"; return 1; }
	touch "$_b/.config.checked"
}

# kbuild DIR DEST: build bzImage in DIR and copy it, the .config and the
# tree's last commits to DEST/.
kbuild() {
	_b=$1 _dest=$2
	log "building $_dest in $_b"
	_start=$(date +%s)
	kmake "$_b" -j"$JOBS" bzImage >"$_b/build.log" 2>&1 || {
		tail -n 40 "$_b/build.log" >&2; log "$_dest failed to build"; return 1; }
	mkdir -p "$_dest"
	cp "$_b/arch/x86/boot/bzImage" "$_b/.config" "$_dest/"
	git -C "$SRC" log --oneline -3 >"$_dest/commits"
	log "built $_dest in $(( $(date +%s) - _start )) s"
}
