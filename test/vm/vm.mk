# VM harness targets: see test/vm/HARNESS.md. Everything expensive (kernel
# tree, builds) is cached under $(CACHE), so a second run only boots VMs.
.PHONY: vmkernels vmtest vmbench checkpatch
# vmkernels: fetch the tree and build base, p1, p2 and debug (cached).
vmkernels: deps
	test/vm/build-kernels

# vmtest: all guest tests on p2, base (control), p1 and debug, then checkpatch.
vmtest: deps
	test/vm/vmtest

# vmbench: base, p1, p2 in one run; rewrites docs/vmbench.md.
vmbench: deps
	test/vm/vmbench

# checkpatch: checkpatch.pl --strict on each patch and a git am apply check.
checkpatch: deps
	test/vm/checkpatch
