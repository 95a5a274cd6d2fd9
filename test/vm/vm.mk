# VM harness targets: see test/vm/HARNESS.md. Everything expensive (kernel
# tree, builds) is cached under $(CACHE), so a second run only boots VMs.
.PHONY: vmkernels vmtest vmbench checkpatch vmtest-limits vmbench-limits
# vmkernels: fetch the tree and build base, p1, p2 and debug (cached).
vmkernels: deps
	test/vm/build-kernels

# vmtest: the mirror lookup on sources of its own, all guest tests on p2,
# base (control), p1 and debug, then checkpatch.
vmtest: deps
	test/lib/apt-mirror-test
	test/vm/vmtest
	test/vm/limits/run test

# vmbench: base, p1, p2 in one run; rewrites docs/vmbench.md.
vmbench: deps
	test/vm/vmbench
	test/vm/limits/run bench

# checkpatch: checkpatch.pl --strict on each patch and a git am apply check.
checkpatch: deps
	test/vm/checkpatch

# The follow-up series, kernel-patches/limits/ (queue limits, wbt_lat_usec):
# vmtest-limits: guest tests on its p2, base (control), p1 and debug, then
# checkpatch and git am on base. vmbench-limits: base, p1, p2 in one run;
# rewrites docs/vmbench-limits.md. Both are also part of vmtest and vmbench.
vmtest-limits: deps
	test/vm/limits/run test

vmbench-limits: deps
	test/vm/limits/run bench

# kernels: the base kernel of every version in test/vm/kernels.list (6.12,
# 7.2, 7.3), each booted on null_blk to time an unchanged write of every
# setting the helper knows; rewrites docs/kernels.md. Part of `make bench`,
# not of `make test` (three kernel builds the first time).
.PHONY: kernels
kernels: deps
	GO="$(GO)" test/vm/kernels measure

bench: kernels
