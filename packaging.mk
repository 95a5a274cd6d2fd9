# Installing and packaging (docs/install.md), included by the Makefile,
# which defines GO, PREFIX, DESTDIR, CACHE and the build target.
#
#   make install [DESTDIR=...] [PREFIX=/usr] [UDEV_HELPER=static|link]
#   make uninstall [same variables]    removes exactly what install put
#   make deb                           out/deb/iosched_VERSION_ARCH.deb
#   make pkgtest                       test/pkg/run: lintian, DESTDIR round
#                                      trip, package in the VM's rootfs
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
# with another PREFIX the hook is installed but inert.
INITRAMFSDIR ?= $(PREFIX)/share/initramfs-tools
GO_MD2MAN ?= go-md2man
# Every rules file of rules.d/, by name: install and uninstall use one list.
IOSCHED_RULES := $(notdir $(wildcard rules.d/*.rules))

.PHONY: man install install-files uninstall deb pkgtest

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
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(INITRAMFSDIR)/hooks
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
	sed -e 's|@UDEVDIR@|$(UDEVDIR)|g' -e 's|@RULES@|$(IOSCHED_RULES)|g' \
		initramfs/hook >$(DESTDIR)$(INITRAMFSDIR)/hooks/iosched
	chmod 0755 $(DESTDIR)$(INITRAMFSDIR)/hooks/iosched
	@if [ -z "$(DESTDIR)" ] && [ -d /run/udev ] && command -v udevadm >/dev/null; then \
		echo "udevadm control --reload"; udevadm control --reload; fi
endef

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/iosched $(DESTDIR)$(UDEVDIR)/iosched-udev \
		$(addprefix $(DESTDIR)$(UDEVDIR)/rules.d/,$(IOSCHED_RULES)) \
		$(DESTDIR)$(MANDIR)/man8/iosched.8 $(DESTDIR)$(BASHCOMPDIR)/iosched \
		$(DESTDIR)$(INITRAMFSDIR)/hooks/iosched
	@if [ -z "$(DESTDIR)" ] && [ -d /run/udev ] && command -v udevadm >/dev/null; then \
		echo "udevadm control --reload"; udevadm control --reload; fi

# deb: dpkg-buildpackage on a copy of the tree (the files git tracks or
# would track, so bin/, out/ and editor debris stay out of the source
# package) under out/deb/build, so nothing is written beside the checkout.
# Leaves the .deb, .dsc, source tarball, .buildinfo and .changes in out/deb.
# debian/README.source says where Go and the modules come from.
DEB_OUT := out/deb
deb: deps
	@rm -rf $(DEB_OUT) && mkdir -p $(DEB_OUT)/build
	@v=$$(dpkg-parsechangelog -S Version) && src=$(DEB_OUT)/build/iosched-$$v && \
	mkdir -p $$src && \
	{ git ls-files -z --cached --others --exclude-standard 2>/dev/null || \
	  find . -path ./.git -prune -o -path ./bin -prune -o -path ./out -prune -o ! -type d -print0; } | \
	  xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
	  tar --null -T - -cf - | tar -xf - -C $$src && \
	echo "deb: dpkg-buildpackage in $$src (log: $(DEB_OUT)/build.log)" && \
	if ! (cd $$src && GO=$(GO) UDEV_HELPER=$(UDEV_HELPER) dpkg-buildpackage --no-sign -j$$(nproc)) >$(DEB_OUT)/build.log 2>&1; then \
		tail -n 40 $(DEB_OUT)/build.log >&2; echo "deb: dpkg-buildpackage failed" >&2; exit 1; fi && \
	mv $(DEB_OUT)/build/iosched_* $(DEB_OUT)/ && \
	rm -rf $(DEB_OUT)/build && ls $(DEB_OUT)/*.deb

pkgtest: deps
	GO=$(GO) test/pkg/run
