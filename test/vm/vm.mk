# VM harness targets: see test/vm/HARNESS.md. Everything expensive (kernel
# trees, builds) is cached under $(CACHE), so a second run only boots VMs.
# Each kernel series lives in kernel-patches/SERIES/ (patches, series file,
# config) and is driven by one entry point, test/vm/series SERIES test|bench.
SERIES := elevator limits
# Series with a guest test but no benchmark, and boots too long for make
# vmtest (kernel-patches/README.md gives the times): their own vmtest-SERIES
# target, in vmtest-all (make bench), checkpatch and vmkernels.
TEST_ONLY_SERIES := tagset
ALL_SERIES := $(SERIES) $(TEST_ONLY_SERIES)
.PHONY: vmkernels vmtest vmtest-all vmbench vmstall checkpatch kernels \
	$(addprefix vmtest-,$(ALL_SERIES)) $(addprefix vmbench-,$(SERIES))

# vmkernels: fetch the trees and build every series' kernels (cached).
vmkernels: deps
	for s in $(ALL_SERIES); do . kernel-patches/$$s/config; \
		for k in $$KERNELS; do test/vm/build-kernels $$k $$s >/dev/null || exit 1; done; done

# vmtest: the mirror lookup on sources of its own, then each series' guest
# tests on its test kernels (base, every step, debug), checkpatch and git am;
# the test-only series get checkpatch and git am here (seconds), their
# boots in vmtest-all.
vmtest: deps $(addprefix vmtest-,$(SERIES))
	test/lib/apt-mirror-test
	for s in $(TEST_ONLY_SERIES); do test/vm/checkpatch $$s || exit 1; done

$(addprefix vmtest-,$(ALL_SERIES)): vmtest-%: deps
	test/vm/series $* test

# vmtest-all: the same guest tests on every kernel each series applies to
# (7.3, 7.2, 6.12 through its variant): the full matrix, in `make bench`.
vmtest-all: deps
	for s in $(ALL_SERIES); do test/vm/series $$s test --kernels all || exit 1; done

# vmbench: each series on every kernel it applies to, base vs every step in
# one run; rewrites the series' document (docs/vmbench.md,
# docs/vmbench-limits.md).
vmbench: $(addprefix vmbench-,$(SERIES))

$(addprefix vmbench-,$(SERIES)): vmbench-%: deps
	test/vm/series $* bench

# checkpatch: checkpatch.pl --strict on each patch and git am on every base.
checkpatch: deps
	for s in $(ALL_SERIES); do test/vm/checkpatch $$s || exit 1; done

# kernels: the base kernel of every version in test/vm/kernels.list (6.12,
# 7.2, 7.3), each booted on null_blk to time an unchanged write of every
# setting the helper knows; rewrites docs/kernels.md. Part of `make bench`,
# not of `make test` (three kernel builds the first time).
kernels: deps
	GO="$(GO)" test/vm/kernels measure

# vmstall: a busy disk's read latency under unchanged queue writes and the
# modprobe runs of a "none" storm, 7.3 base against each series in one
# run (its own kernel config: test/vm/config/stall.fragment); rewrites
# docs/vmstall.md. Part of `make bench` (one kernel build the first time,
# about 8 min of guests after).
vmstall: deps
	test/vm/stall

bench: vmtest-all kernels vmstall
