# iosched: see README.md. Quick start: `make status`, `make test`.
GO ?= go
PREFIX ?= /usr
DESTDIR ?=

.PHONY: all build status test bench deps lint clean
all: build

# deps installs what the tests need: missing Debian packages and the Go
# modules (scripts/install-deps test); build and lint install only their
# own sets (build installs no test tools: qemu, debootstrap; lint checks
# that it stays so), and the tests install nothing themselves.
deps:
	@scripts/install-deps test

# The version has one home: VERSION (docs/release.md); debian/changelog
# and the RPM spec repeat it and their builds check that they agree.
VERSION := $(shell cat VERSION)
GO_LDFLAGS := -s -w -X main.version=$(VERSION)

build:
	@scripts/install-deps build
	@mkdir -p bin
	$(GO) build -trimpath -ldflags='$(GO_LDFLAGS)' -o bin/iosched ./helper/cmd/iosched
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='$(GO_LDFLAGS)' -o bin/iosched-static ./helper/cmd/iosched

status: build
	bin/iosched status

# The tests: test/check, one file a test under test/GROUP/ (test/vm/HARNESS.md).
# lint: Go (gofmt, vet, staticcheck), shellcheck on every shell script,
# references a reader cannot follow, the harness's own tests (unit/lint).
lint:
	@scripts/install-deps lint
	test/check unit/lint

# test: the whole suite, TEST_JOBS tests at a time (default 4 on the CI
# machine's 2 CPUs: the guests take turns, test/lib/host.sh, and the host
# work fills the time they leave). The guest tests of vm and udev run one
# after another in one job (their LANE), so they hold one slot, not all;
# the tests that boot guests start first, then fuzzing (its time is
# fixed), then the host's others.
TEST_JOBS ?= 4
test: deps
	test/check -j $(TEST_JOBS) -g vm -g udev -g boot pkg/pkgtest host/fuzz -g pkg -g host -g unit

# bench: every benchmark, one at a time (they time things), each rewriting
# its table in docs/, and the full matrix of the tests (full: every series
# on every kernel, the bare install's udev test, the command line's
# choice).
bench: deps
	test/check -g full -g bench

clean:
	rm -rf bin

include packaging.mk
