# iosched: see README.md. Quick start: `make status`, `make test`.
CACHE ?= /var/cache/iosched-test
GO ?= go
PREFIX ?= /usr
DESTDIR ?=
export CACHE

.PHONY: all build status test gotest itest bench deps lint clean
all: build

# deps installs missing Debian packages and downloads Go modules; every
# entry point that needs them depends on it, so a fresh machine needs nothing else.
deps:
	@scripts/install-deps

build: deps
	@mkdir -p bin
	$(GO) build -trimpath -ldflags='-s -w' -o bin/iosched ./helper/cmd/iosched
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o bin/iosched-static ./helper/cmd/iosched

status: build
	bin/iosched status

lint: deps
	test -z "$$(gofmt -l helper test bench)" || { gofmt -l helper test bench; exit 1; }
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

gotest: deps
	$(GO) test ./helper/...

# itest: root-only integration tests on loop devices the tests create.
itest: build
	$(GO) test -count=1 ./test/integration/...

test: lint gotest itest vmtest udevtest pkgtest

# bench: every benchmark, each rewriting its table in docs/: the kernel
# series base vs patched in qemu (vmbench), the udev rules in qemu
# (udevbench), then the helper against raw writes on a loop device.
bench: build vmbench udevbench
	bench/helper-bench

clean:
	rm -rf bin

include test/vm/vm.mk
include test/udev/udev.mk
include packaging.mk
include test/boot/boot.mk
