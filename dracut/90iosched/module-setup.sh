#!/bin/bash
# dracut module, installed as MODULESDIR/90iosched/module-setup.sh by `make
# install` (which fills in @RULES@).
#
# Puts the iosched-udev helper and the iosched rules into the initramfs
# together, so that the initramfs's udevd applies the policy to the disks
# it brings up, and a rule never runs without its helper. A file of the
# same name in /etc/udev/rules.d overrides ours, as udevd does it: its copy
# goes in instead, and a link to /dev/null (a mask) leaves the rule out.

# shellcheck disable=SC2154 # udevdir, dracutsysrootdir: set by dracut
IOSCHED_RULES="@RULES@"

# called by dracut
check() {
    # Removed (make uninstall) but the module left behind: nothing to add.
    require_binaries "$udevdir/iosched-udev" || return 1
    return 0
}

# called by dracut
depends() {
    echo udev-rules
    return 0
}

# called by dracut
install() {
    local _rule _etc
    # The rules name the helper (RUN+="iosched-udev"), and inst_rules
    # installs a program a rule names; this installs it when the rules are
    # masked too. inst_binary follows a symlink (UDEV_HELPER=link: to
    # /usr/sbin/iosched, with the libudev.so.1 it links) and keeps the
    # link's name, which is what makes the program run as the udev helper.
    inst_binary "$udevdir/iosched-udev"
    # The local policy: rules in /etc/udev/rules.d that set an IOSCHED_
    # property (docs/udev.md, "Overrides": 61-iosched-local.rules, and the
    # files `iosched audit --fix` converted under their own names). dracut's udev-rules
    # module takes only a fixed list of rules, so without these the
    # initramfs would apply the default policy where the local one says
    # otherwise. A mask (a link to /dev/null) is not a regular file and
    # stays out; our own names are handled below.
    for _etc in "${dracutsysrootdir-}"/etc/udev/rules.d/*.rules; do
        [[ -f $_etc ]] || continue
        [[ " $IOSCHED_RULES " == *" ${_etc##*/} "* ]] && continue
        grep -q 'IOSCHED_' "$_etc" && inst_rules "$_etc"
    done
    for _rule in $IOSCHED_RULES; do
        _etc=${dracutsysrootdir-}/etc/udev/rules.d/$_rule
        if [[ -L $_etc ]] && [[ $(readlink -f "$_etc") == /dev/null ]]; then
            continue
        fi
        if [[ -e $_etc ]]; then
            # An absolute path goes to /etc/udev/rules.d in the image,
            # where it shadows ours as it does on the host.
            inst_rules "$_etc"
        else
            inst_rules "$_rule"
        fi
    done
    # The I/O schedulers the policy may name, where the kernel builds them
    # as modules (bfq, kyber): without them the initramfs's helper cannot
    # switch a disk whose first choice is one of them, and the root
    # filesystem's udevd starts it again to load the module and switch.
    # Whether or not the host has them loaded (hostonly), and a name the
    # kernel lacks or has built in adds nothing.
    hostonly='' instmods bfq kyber-iosched mq-deadline
}
