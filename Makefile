# iosched: see README.md. Quick start: `make status`, `make test`.
CACHE ?= /var/cache/iosched-test
GO ?= go
PREFIX ?= /usr
DESTDIR ?=
export CACHE

.PHONY: all build status test gotest fuzz itest bench deps deps-build deps-lint lint clean
all: build

# deps installs missing Debian packages and downloads Go modules; every
# entry point that needs them depends on it, so a fresh machine needs nothing else.
# Each takes only its set (scripts/install-deps): building installs no
# test tools (qemu, debootstrap), and lint checks that it stays so.
deps:
	@scripts/install-deps test
deps-build:
	@scripts/install-deps build
deps-lint:
	@scripts/install-deps lint

# The version has one home: VERSION (docs/release.md); debian/changelog
# and the RPM spec repeat it and their builds check that they agree.
VERSION := $(shell cat VERSION)
GO_LDFLAGS := -s -w -X main.version=$(VERSION)

build: deps-build
	@mkdir -p bin
	$(GO) build -trimpath -ldflags='$(GO_LDFLAGS)' -o bin/iosched ./helper/cmd/iosched
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='$(GO_LDFLAGS)' -o bin/iosched-static ./helper/cmd/iosched

status: build
	bin/iosched status

# lint: Go (gofmt, vet, staticcheck), every shell script git tracks
# (shellcheck, warnings and errors), references a reader of the
# repository cannot follow (scripts/check-references), and the test
# harness's result protocol against fake guests (test/lib/ktap-test).
# scripts/fuzz-test holds scripts/fuzz's verdicts and its one retry against a fake go.
lint: deps-lint
	! scripts/install-deps --list build | grep -Ex 'qemu.*|debootstrap|busybox.*'
	test -z "$$(gofmt -l helper test bench)" || { gofmt -l helper test bench; exit 1; }
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	shellcheck -S warning -x $$(scripts/shell-files)
	scripts/check-references
	scripts/check-references-test
	scripts/fuzz-test >/dev/null
	test/lib/ktap-test >/dev/null

gotest: deps-build
	$(GO) test ./helper/... ./bench/...

# fuzz: every Go fuzz target (go test -list '^Fuzz'), FUZZTIME each
# (default 15s) with FUZZ_PARALLEL workers (default one per CPU), at
# niceness FUZZ_NICE (default 0); a failing input stays in its
# testdata/fuzz/ as a regression case and the run fails naming it.
FUZZ_NICE ?= 0
fuzz: deps
	GO=$(GO) FUZZ_PARALLEL=$(FUZZ_PARALLEL) nice -n $(FUZZ_NICE) scripts/fuzz

# itest: root-only integration tests on loop devices the tests create.
itest: deps build
	$(GO) test -count=1 ./test/integration/...

# test: the whole suite, TEST_JOBS of its targets at a time (default 4 on
# the CI machine's 2 CPUs). The locks, not make, share the CPUs: the qemu
# guests take turns (one per two CPUs: guest_slot_take in
# test/lib/host.sh), the series' kernel builds too (build-kernels), so a
# target waiting for one must not keep another from its host work
# (chroots, debootstrap, the boot kernel's build, package builds, lint,
# and fuzzing with one worker, FUZZ_PARALLEL=1, at niceness 19: its time
# is fixed, so it takes only what no other work wants). The guests run at
# niceness -10 (guest_nice in test/lib/host.sh): they are the critical
# path.
# With more than one job make prints each target's output whole when it
# ends (--output-sync). What two targets share is built once by this make
# (build, man, deb: without debian/rules' go test, DEB_BUILD_OPTIONS=nocheck,
# which gotest runs) or taken under a lock (kernel trees and builds, root
# filesystems, images).
# Make starts ready targets in no order it promises, so the targets that
# would only queue for the series' kernel builds and the guests run one
# after another in one job slot (TEST_CHAIN), leaving the others to the
# boot test, pkgtest and the host-only targets.
# udevtest is not among them: pkgtest's vm phase boots the same guest,
# test/udev/guest-udevtest, on the files the .deb installed (make install
# under debian/rules, with the packages' one binary: iosched-udev a link to
# the cgo build), so make test runs it once; `make udevtest` runs it on a
# bare make install (the static helper).
TEST_JOBS ?= 4
TEST_TARGETS := boottest pkgtest vmtest fuzz lint gotest itest udevfix udevfleet
test:
	$(MAKE) --no-print-directory -j$(TEST_JOBS) $(if $(filter 1,$(TEST_JOBS)),,--output-sync=target) \
		FUZZ_PARALLEL=$(if $(filter 1,$(TEST_JOBS)),,1) FUZZ_NICE=$(if $(filter 1,$(TEST_JOBS)),0,19) \
		DEB_BUILD_OPTIONS=nocheck TEST_CHAIN=1 $(TEST_TARGETS)
ifdef TEST_CHAIN
vmtest-limits: | vmtest-elevator
udevfix: | vmtest-limits
udevfleet: | udevfix
endif

# bench: every benchmark, each rewriting its table in docs/: the kernel
# series base vs patched in qemu (vmbench), the udev rules in qemu
# (udevbench), then the helper against raw writes on a loop device, and
# what raw and helper writes every 100 ms cost fio's reads of a busy loop
# device (stall-host, docs/stall-host.md).
bench: build vmbench udevbench
	bench/helper-bench
	bench/stall-host

clean:
	rm -rf bin

include test/vm/vm.mk
include test/udev/udev.mk
include packaging.mk
include test/boot/boot.mk
