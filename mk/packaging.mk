# SPDX-License-Identifier: GPL-2.0
#
# Packaging targets, included by the top-level Makefile (TOP, BUILD, VERSION,
# KVER and KDIR come from there).  docs/PACKAGING.md explains them.
#
#   make install     [PREFIX=/usr/local] [DESTDIR=] [MODULE=auto|dkms|kbuild|none]
#                    [KERNELS="rel ..." | KVER=rel] [LOAD_AT_BOOT=1] [NO_APT=1]
#   make uninstall   [PREFIX=...] [DESTDIR=] [PURGE=1]
#   make deb         build/deb/offsample-dkms_<version>-1_all.deb (+ offsample-tools)
#   make matrix      build against every supported Debian kernel header package
#   make lint        checkpatch.pl --strict and sparse (C=2) on module/
#                    (make check, in the top Makefile, runs every host
#                    suite, this among them: tests/host/packaging.bats)
#   make dkms-src    the DKMS source tree in build/dkms/offsample-<version>/
#   make dkms-status what DKMS knows about offsample

PREFIX ?= /usr/local
DESTDIR ?=
MODULE ?= auto
# `make install KVER=rel` installs for that kernel only; KERNELS takes a list.
KERNELS ?= $(if $(filter command line,$(origin KVER)),$(KVER))
LOAD_AT_BOOT ?=
PURGE ?=
NO_APT ?=

offs_pkg_env = TOP='$(TOP)' BUILD='$(BUILD)' DESTDIR='$(DESTDIR)' PREFIX='$(PREFIX)' \
	MODULE='$(MODULE)' KERNELS='$(KERNELS)' LOAD_AT_BOOT='$(LOAD_AT_BOOT)' \
	PURGE='$(PURGE)' NO_APT='$(NO_APT)'

.PHONY: install uninstall deb matrix lint checkpatch sparse dkms-src dkms-status \
	help-packaging test-dkms-upgrade

install:
	@$(offs_pkg_env) $(TOP)/packaging/install.sh install

uninstall:
	@$(offs_pkg_env) $(TOP)/packaging/install.sh uninstall

dkms-src:
	@rm -rf $(BUILD)/dkms/offsample-$(VERSION)
	@$(TOP)/packaging/install.sh dkms-src $(BUILD)/dkms/offsample-$(VERSION)
	@echo "DKMS source tree: $(BUILD)/dkms/offsample-$(VERSION) (dkms add $(BUILD)/dkms/offsample-$(VERSION))"

dkms-status:
	@dkms status -m offsample

deb:
	@BUILD='$(BUILD)' NO_APT='$(NO_APT)' $(TOP)/packaging/deb.sh

# MATRIX_BULLSEYE=0 skips the bullseye 5.10 entry (it needs a private apt
# configuration with the bullseye suite, see docs/MATRIX.md).
matrix:
	@BUILD='$(BUILD)' NO_APT='$(NO_APT)' MATRIX_BULLSEYE='$(MATRIX_BULLSEYE)' \
		MATRIX_DOC='$(MATRIX_DOC)' $(TOP)/packaging/matrix.sh

# CHECK_KERNELS: kernels for sparse (default: tests/vm/kernels.sh);
# CHECK_DOC=1 records the result in docs/MATRIX.md.
lint:
	@BUILD='$(BUILD)' NO_APT='$(NO_APT)' CHECK_KERNELS='$(CHECK_KERNELS)' \
		CHECK_DOC='$(CHECK_DOC)' $(TOP)/packaging/check.sh all

checkpatch:
	@BUILD='$(BUILD)' NO_APT='$(NO_APT)' $(TOP)/packaging/check.sh checkpatch

sparse:
	@BUILD='$(BUILD)' NO_APT='$(NO_APT)' CHECK_KERNELS='$(CHECK_KERNELS)' \
		$(TOP)/packaging/check.sh sparse

# The kernel upgrade inside a guest (slow under emulation, not in make test):
# make install here for the first test kernel, boot it, install the other
# kernel's headers' DKMS hook there and check DKMS built for it.
test-dkms-upgrade:
	@$(TOP)/packaging/dkms-upgrade-test.sh

help-packaging:
	@echo "make install [PREFIX=] [MODULE=auto|dkms|kbuild|none] [KVER=|KERNELS=] [LOAD_AT_BOOT=1]"
	@echo "                                 DKMS module for every kernel with headers, tools, man pages, config"
	@echo "make uninstall [PURGE=1]         remove all of it (every offsample version DKMS knows)"
	@echo "make deb                         offsample-dkms and offsample-tools .debs in build/deb/"
	@echo "make matrix                      build against every supported Debian header package"
	@echo "make lint                        checkpatch.pl --strict and sparse on module/"
	@echo "make test-dkms-upgrade           a kernel upgrade through DKMS inside a guest (slow)"
	@echo "make dkms-src | dkms-status      DKMS source tree in build/dkms/ | dkms status"
