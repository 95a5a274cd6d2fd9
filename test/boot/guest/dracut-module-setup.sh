#!/bin/bash
# Test-only dracut module of the boot test (not of the package), installed
# by test/boot/mkimage as /usr/lib/dracut/modules.d/99iosched-boottest:
# the dracut equivalent of the initramfs-tools init-bottom script. It runs
# mark-switch-root once the initramfs's udevd has stopped, just before
# switch_root, so the counts split there into the initramfs phase and the
# root phase.

# shellcheck disable=SC2154 # moddir, initdir, systemdsystemunitdir: set by dracut

# called by dracut
check() {
    # Only when asked for (add_dracutmodules in the test's dracut.conf.d).
    return 255
}

# called by dracut
depends() {
    # The marker is a unit ordered against systemd's initrd units.
    echo systemd
    return 0
}

# called by dracut
install() {
    # udevd of the initramfs stops in initrd-udevadm-cleanup-db.service;
    # the unit runs after it and before initrd-switch-root.service.
    inst_multiple sh cat grep mount umount
    inst_simple "$moddir/mark-switch-root" /usr/lib/iosched-boottest/mark-switch-root
    inst_simple "$moddir/iosched-boottest-mark.service" \
        "$systemdsystemunitdir/iosched-boottest-mark.service"
    mkdir -p "$initdir$systemdsystemunitdir/initrd-switch-root.target.wants"
    ln -sf ../iosched-boottest-mark.service \
        "$initdir$systemdsystemunitdir/initrd-switch-root.target.wants/iosched-boottest-mark.service"
}
