# Installing and packaging (docs/install.md), included by the Makefile,
# which defines GO, PREFIX, DESTDIR and the build target. The package
# tests are test/pkg/pkgtest.test (in make test) and test/bench/startup.test.
#
#   make install [DESTDIR=...] [PREFIX=/usr] [UDEV_HELPER=static|link]
#                [DRACUTDIR=...] [INITRAMFSDIR=...]   (empty: left out)
#   make uninstall [same variables]    removes exactly what install put
#   make deb                           out/deb/iosched_VERSION_ARCH.deb
#                                      (packaging/deb/build)
#   make rpm                           out/rpm/RPMS/ARCH/iosched-*.rpm
#                                      (packaging/rpm/build)
#   make dist                          out/dist: iosched-VERSION.tar.gz,
#                                      iosched-VERSION-vendor.tar.gz and
#                                      SHA256SUMS (packaging/dist;
#                                      docs/release.md)
#   make debbuild [PREVIOUS_DEB=...]   packaging/deb/sid-build: the source
#                                      package built offline in a clean sid
#                                      chroot, sid's lintian --pedantic,
#                                      autopkgtest, piuparts-style upgrade
#                                      from PREVIOUS_DEB; out/debbuild
#
# UDEV_HELPER says what $(UDEVDIR)/iosched-udev is: "static", a copy of
# bin/iosched-static (CGO_ENABLED=0: no libudev to load on every event), or
# "link", a relative symlink to $(SBINDIR)/iosched (the cgo build); the
# program runs `iosched udev` when called by that name either way.
UDEV_HELPER ?= static
# Also read on its own (make -f packaging.mk man|install-files, as
# debian/rules does), so the top Makefile's defaults are repeated here.
PREFIX ?= /usr
GO ?= go
# udev reads its directory from where systemd was built, not from PREFIX:
# ask udev.pc (systemd-dev on trixie, udev on bookworm), else the
# merged-/usr default.
ifeq ($(origin UDEVDIR),undefined)
UDEVDIR := $(or $(shell pkg-config --variable=udevdir udev 2>/dev/null),/usr/lib/udev)
endif
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
# bash-completion.pc's directory under PREFIX (bookworm's .pc spells out
# datadir, so both are redefined); without the .pc, the same path.
ifeq ($(origin BASHCOMPDIR),undefined)
BASHCOMPDIR := $(or $(shell pkg-config --define-variable=prefix=$(PREFIX) --define-variable=datadir=$(PREFIX)/share \
	--variable=completionsdir bash-completion 2>/dev/null),$(PREFIX)/share/bash-completion/completions)
endif
# initramfs-tools reads hooks from /usr/share/initramfs-tools/hooks only:
# with another PREFIX the hook is installed but inert. Empty: no hook (the
# RPM: no initramfs-tools there).
INITRAMFSDIR ?= $(PREFIX)/share/initramfs-tools
# dracut's module directory, where dracut is installed (dracut.pc, else the
# directory itself); the module goes in only then, or when DRACUTDIR is
# given. Empty: no module.
ifeq ($(origin DRACUTDIR),undefined)
DRACUTDIR := $(or $(shell pkg-config --variable=dracutmodulesdir dracut 2>/dev/null),$(wildcard /usr/lib/dracut/modules.d))
endif
GO_MD2MAN ?= go-md2man
# Every rules file of rules.d/, by name: install and uninstall use one list.
IOSCHED_RULES := $(notdir $(wildcard rules.d/*.rules))

.PHONY: man install install-files uninstall dist deb rpm debbuild

man: bin/iosched.8
bin/iosched.8: man/iosched.8.md
	@mkdir -p bin
	$(GO_MD2MAN) -in $< -out $@

# install-files: install what build and man made, without building (the
# Debian package's rules build with the distribution's flags first).
install: build man
	$(install-recipe)
install-files:
	$(install-recipe)

define install-recipe
	@case "$(UDEV_HELPER)" in static|link) ;; \
	*) echo "UDEV_HELPER=$(UDEV_HELPER): want static or link" >&2; exit 2 ;; esac
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(UDEVDIR)/rules.d \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR)
	install -m 0755 bin/iosched $(DESTDIR)$(SBINDIR)/iosched
	rm -f $(DESTDIR)$(UDEVDIR)/iosched-udev
	if [ "$(UDEV_HELPER)" = static ]; then \
		install -m 0755 bin/iosched-static $(DESTDIR)$(UDEVDIR)/iosched-udev; \
	else \
		ln -sr $(DESTDIR)$(SBINDIR)/iosched $(DESTDIR)$(UDEVDIR)/iosched-udev; \
	fi
	install -m 0644 $(addprefix rules.d/,$(IOSCHED_RULES)) $(DESTDIR)$(UDEVDIR)/rules.d/
	install -m 0644 bin/iosched.8 $(DESTDIR)$(MANDIR)/man8/iosched.8
	install -m 0644 completion/iosched.bash $(DESTDIR)$(BASHCOMPDIR)/iosched
	$(if $(INITRAMFSDIR),install -d $(DESTDIR)$(INITRAMFSDIR)/hooks && \
		sed -e 's|@UDEVDIR@|$(UDEVDIR)|g' -e 's|@RULES@|$(IOSCHED_RULES)|g' \
		initramfs/hook >$(DESTDIR)$(INITRAMFSDIR)/hooks/iosched && \
		chmod 0755 $(DESTDIR)$(INITRAMFSDIR)/hooks/iosched)
	$(if $(DRACUTDIR),install -d $(DESTDIR)$(DRACUTDIR)/90iosched && \
		sed -e 's|@RULES@|$(IOSCHED_RULES)|g' dracut/90iosched/module-setup.sh \
		>$(DESTDIR)$(DRACUTDIR)/90iosched/module-setup.sh && \
		chmod 0755 $(DESTDIR)$(DRACUTDIR)/90iosched/module-setup.sh)
	@if [ -z "$(DESTDIR)" ] && [ -d /run/udev ] && command -v udevadm >/dev/null; then \
		echo "udevadm control --reload"; udevadm control --reload; fi
endef

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/iosched $(DESTDIR)$(UDEVDIR)/iosched-udev \
		$(addprefix $(DESTDIR)$(UDEVDIR)/rules.d/,$(IOSCHED_RULES)) \
		$(DESTDIR)$(MANDIR)/man8/iosched.8 $(DESTDIR)$(BASHCOMPDIR)/iosched \
		$(if $(INITRAMFSDIR),$(DESTDIR)$(INITRAMFSDIR)/hooks/iosched) \
		$(if $(DRACUTDIR),$(DESTDIR)$(DRACUTDIR)/90iosched/module-setup.sh)
	$(if $(DRACUTDIR),rmdir --ignore-fail-on-non-empty $(DESTDIR)$(DRACUTDIR)/90iosched 2>/dev/null || :)
	@if [ -z "$(DESTDIR)" ] && [ -d /run/udev ] && command -v udevadm >/dev/null; then \
		echo "udevadm control --reload"; udevadm control --reload; fi

# dist: the release tarballs and their checksums, from the tree, offline
# (go.mod's modules from the module cache install-deps filled).
dist:
	@scripts/install-deps build
	GO=$(GO) packaging/dist

# deb: the Debian package into out/deb (packaging/deb/build says how);
# UDEV_HELPER only when given: the package's own default is debian/rules'
# (link: one binary, docs/install.md);
# DEB_BUILD_OPTIONS goes to dpkg-buildpackage (test/check gives nocheck:
# its unit/go runs the go test debian/rules would).
deb:
	@scripts/install-deps deb
	GO=$(GO) $(if $(filter command line environment,$(origin UDEV_HELPER)),UDEV_HELPER=$(UDEV_HELPER)) \
		DEB_BUILD_OPTIONS="$(DEB_BUILD_OPTIONS)" packaging/deb/build

# rpm: the RPMs from packaging/rpm/iosched.spec into out/rpm, from the
# release tarball and a vendor tarball of this machine's module cache, with
# this machine's Go and no network (packaging/rpm/build); DEB_BUILD_OPTIONS
# with nocheck skips %check.
rpm:
	@scripts/install-deps rpm
	GO=$(GO) DEB_BUILD_OPTIONS="$(DEB_BUILD_OPTIONS)" packaging/rpm/build

# debbuild: the Debian source package as a buildd builds it and as the
# archive checks it (packaging/deb/sid-build); make bench runs it too
# (test/full/debbuild.test).
# PREVIOUS_DEB: the package to upgrade from (the piuparts phase skips the
# upgrade without it).
debbuild: deps
	packaging/deb/sid-build $(if $(PREVIOUS_DEB),--previous $(PREVIOUS_DEB))
