# SPDX-License-Identifier: GPL-2.0
#
# The build entry dkms.conf uses: build module/ for one kernel in
# build/<kernel release>/ (symlinks to the sources, so `make M=... clean`
# never touches them), with nothing else from the checkout; module/Kbuild
# runs the feature probes.
#
#   make -f packaging/dkms.mk KDIR=/lib/modules/REL/build [KERNELRELEASE=REL]
#   make -f packaging/dkms.mk KDIR=... clean

SHELL := /bin/bash
SRC := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
KDIR ?= /lib/modules/$(KERNELRELEASE)/build
# DKMS passes KERNELRELEASE; otherwise read it from the headers.
OFFS_REL := $(or $(KERNELRELEASE),$(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	$(KDIR)/include/generated/utsrelease.h 2>/dev/null))
OUT := $(SRC)/build/$(OFFS_REL)

.PHONY: all clean
all:
	@if [ -z "$(OFFS_REL)" ] || [ ! -d "$(KDIR)" ]; then \
		echo "dkms.mk: no kernel headers in KDIR=$(KDIR)" >&2; exit 1; fi
	mkdir -p $(OUT)
	ln -sf $(filter-out %.mod.c %/features.h %/syscalls.h,$(wildcard $(SRC)/module/*.[ch])) \
		$(SRC)/module/Kbuild $(SRC)/VERSION $(OUT)/
	$(MAKE) -C $(KDIR) M=$(OUT) modules

clean:
	@if [ -n "$(OFFS_REL)" ] && [ -d "$(OUT)" ]; then \
		[ ! -d "$(KDIR)" ] || $(MAKE) -C $(KDIR) M=$(OUT) clean; \
		rm -rf $(OUT); \
	fi
