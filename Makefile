# SPDX-License-Identifier: GPL-2.0
#
# offsample top-level Makefile.  `make help` lists the targets.
#
# The module is built out of tree in build/<kernel release>/, one directory
# per kernel, so builds for several kernels coexist and `make -C KDIR M=...
# clean` never touches the sources.

SHELL := /bin/bash
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
VERSION := $(shell cat $(TOP)/VERSION)

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
# A KDIR given without KVER: take the release from the headers.
ifneq ($(origin KDIR),file)
ifeq ($(origin KVER),file)
KVER := $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
endif
endif
BUILD ?= $(TOP)/build
# The sources, without what an in-tree build (make -C KDIR M=$$PWD/module)
# generates there.
MODSRC := $(filter-out %.mod.c %/features.h %/syscalls.h,\
	$(wildcard $(TOP)/module/*.c $(TOP)/module/*.h)) $(TOP)/module/Kbuild

.PHONY: all module modules-all workload test test-host check test-guest demo clean help

all: module

help:
	@echo "make [module] [KVER=rel|KDIR=dir] build module/offsample.ko for a kernel (the default)"
	@echo "make modules-all                 build for every kernel the tests use"
	@echo "make test                        the whole test suite (host + guests); time per suite at the end"
	@echo "make check | test-host           the host suites: tools, renderer, packaging, checkpatch, sparse (minutes)"
	@echo "make test-guest [KVER=6.1|6.12|RELEASE] [SUITES=\"30-drain.bats ...\"] [FILTER=REGEX]"
	@echo "                                 guest suites only: all, or those suites (and tests) in one guest;"
	@echo "                                 then the tools on their recordings, on the host (tests/recorded/)"
	@echo "    (test, test-guest: OFFS_KERNELS=default|rt|all|RELEASES, OFFS_GUEST_JOBS=N (2),"
	@echo "     OFFS_TEST_BUDGET=SECONDS for the whole run (5100), OFFS_GUEST_TIMEOUT=SECONDS per guest,"
	@echo "     OFFS_9P=1: share the root with 9p, not virtio-fs,"
	@echo "     OFFS_ACCT=1: each guest's CPU seconds per program in build/test-results/guest-REL/acct.txt,"
	@echo "     OFFS_BATS_FULL_TRACE=1: a failure inside a test helper reported at the helper's line too)"
	@echo "make demo                        profile a sample workload, write an SVG and a report"
	@echo "make bench [BENCH_SECTIONS=...] [BENCH_KERNEL=rel] [BENCH_MODE=icount]  benchmarks against peers in one guest run -> docs/BENCHMARKS.md (other kernels: docs/BENCHMARKS-rel.md; BENCH_MODE=icount: one vCPU counting instructions, figures that repeat, each with its A/A pair from a second guest (BENCH_AA=0: none) -> docs/BENCHMARKS-icount.md; BENCH_PIPE_PEERS=0: the pipe section without offcputime and perf record)"
	@echo "make bench-insnprof [INSNPROF_THREADS=1000] [INSNPROF_TICKS=6] [INSNPROF_PARAMS=thread_cache=0]  instructions of a tick per function, interrupts-off code included (one icount guest, a QEMU plugin) -> build/bench/insnprof/profile.txt"
	@echo "make stress                      long stress + fuzz suites, a guest per test kernel"
	@echo "make test-debug [OFFS_PARTS=core|long] [OFFS_SUITES=\"00-load.bats ...\"] [OFFS_FILTER=REGEX]"
	@echo "                [OFFS_CFI_DAMAGE=\"COPIES ROUNDS\"]"
	@echo "                                 every guest suite on a KASAN/lockdep/kmemleak kernel (hours)"
	@echo "make test-atomic [OFFS_PARTS=core|long] [OFFS_SUITES=...] [OFFS_FILTER=REGEX]"
	@echo "                                 guest suites on Debian's 6.1 built with DEBUG_ATOMIC_SLEEP"
	@echo "make test-rt [OFFS_PARTS=core|long]"
	@echo "                                 every guest suite on Debian's 6.12 PREEMPT_RT kernel"
	@echo "make test-matrix [OFFS_SUITES=...] every guest suite (or those) on Debian bullseye's 5.10 (docs/MATRIX.md)"
	@echo "make clean                       remove build/"
	@$(MAKE) --no-print-directory help-packaging

module: $(BUILD)/$(KVER)/offsample.ko
	@echo "built $(BUILD)/$(KVER)/offsample.ko"

$(BUILD)/%/offsample.ko: $(MODSRC) $(TOP)/VERSION $(TOP)/module/probe.sh $(wildcard $(TOP)/module/probes/*.c)
	@kdir=$(if $(filter $*,$(KVER)),$(KDIR),/lib/modules/$*/build); \
	[ -d "$$kdir" ] || kdir=/usr/src/linux-headers-$*; \
	if [ ! -d "$$kdir" ]; then \
		echo "offsample: no kernel headers for $* (looked in $$kdir)." >&2; \
		echo "  Install linux-headers-$* or pass KDIR=/path/to/headers." >&2; \
		exit 1; \
	fi; \
	mkdir -p $(BUILD)/$*; \
	for f in $(MODSRC) $(TOP)/VERSION; do ln -sf $$f $(BUILD)/$*/; done; \
	$(MAKE) -C $$kdir M=$(BUILD)/$* modules W=1

# javac, for the Java workload (below).
JAVAC := $(shell command -v javac 2>/dev/null)

# The test workload: threads that wait in known ways (frame pointers kept).
workload: $(BUILD)/offsample-workload $(BUILD)/offsample-ustack $(BUILD)/offsample-ustack-nofp \
	$(BUILD)/offsample-withpid $(BUILD)/offsample-safety $(BUILD)/offsample-workload-nofp \
	$(BUILD)/offsample-blockers $(BUILD)/offsample-waitfor $(BUILD)/offsample-oncpu \
	$(BUILD)/offsample-cfilib.so $(BUILD)/offsample-cfihost $(BUILD)/offsample-cfibomb \
	$(if $(JAVAC),$(BUILD)/jit/OffsampleHot.class) $(BUILD)/dbg/.made
$(BUILD)/offsample-workload: $(TOP)/tests/workload/offsample-workload.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-Wall -Wextra -Werror -pthread -o $@ $<

# The same without frame pointers, as distributions build (56-cfi.bats).
$(BUILD)/offsample-workload-nofp: $(TOP)/tests/workload/offsample-workload.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror -pthread -o $@ $<

# A library that waits under frames of its own, built like distribution
# software, and a program loading many copies of it (56-cfi.bats: .eh_frame
# damaged while mapped).
$(BUILD)/offsample-cfilib.so: $(TOP)/tests/workload/offsample-cfilib.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -fPIC -shared \
		-Wall -Wextra -Werror -o $@ $<
$(BUILD)/offsample-cfihost: $(TOP)/tests/workload/offsample-cfihost.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -g -Wall -Wextra -Werror -pthread -o $@ $< -ldl

# Files whose .eh_frame makes the CFI compiler work hard, and a process
# that maps them (57-cfi-bounds.bats; tests/host/ucfi.bats).
$(BUILD)/offsample-cfibomb: $(TOP)/tests/workload/offsample-cfibomb.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -Wall -Wextra -Werror -o $@ $<

# User-stack test program, with and without frame pointers.
$(BUILD)/offsample-ustack: $(TOP)/tests/workload/offsample-ustack.c
	@mkdir -p $(BUILD)
	$(CC) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-optimize-sibling-calls -Wall -Wextra -Werror -pthread -o $@ $<
$(BUILD)/offsample-ustack-nofp: $(TOP)/tests/workload/offsample-ustack.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror -pthread -o $@ $<

# JIT-compiled Java for tests/guest/62-jit.bats (javac: tests/lib/deps.sh
# test; the suite says so when it is missing).
$(BUILD)/jit/OffsampleHot.class: $(TOP)/tests/workload/OffsampleHot.java
	@mkdir -p $(BUILD)/jit
	$(JAVAC) -d $(BUILD)/jit $<

# A stripped program named through each route of separate debug
# information (tests/guest/63-debuginfo.bats).
$(BUILD)/dbg/.made: $(TOP)/tests/workload/offsample-dbg.c $(TOP)/tests/workload/mk-dbg.sh
	sh $(TOP)/tests/workload/mk-dbg.sh $(CC) $< $(BUILD)/dbg
	@touch $@

# Sampler-correctness workloads (tests/guest/47-safety.bats), frame pointers kept.
$(BUILD)/offsample-safety: $(TOP)/tests/workload/offsample-safety.c
	@mkdir -p $(BUILD)
	$(CC) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-optimize-sibling-calls -Wall -Wextra -Werror -pthread -o $@ $<

# Threads waiting for locks others hold (tests/guest/58-blockers.bats).
$(BUILD)/offsample-blockers: $(TOP)/tests/workload/offsample-blockers.c
	@mkdir -p $(BUILD)
	$(CC) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-optimize-sibling-calls -Wall -Wextra -Werror -pthread -o $@ $<

# Threads and processes waiting in the kernel (tests/guest/58-waitfor.bats).
$(BUILD)/offsample-waitfor: $(TOP)/tests/workload/offsample-waitfor.c
	@mkdir -p $(BUILD)
	$(CC) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-optimize-sibling-calls -Wall -Wextra -Werror -pthread -o $@ $<

# Threads that run: on-CPU samples, criticality (tests/guest/59-oncpu.bats).
$(BUILD)/offsample-oncpu: $(TOP)/tests/workload/offsample-oncpu.c
	@mkdir -p $(BUILD)
	$(CC) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-optimize-sibling-calls -Wall -Wextra -Werror -pthread -o $@ $<

# Runs a command with a chosen pid (the pid-reuse test).
$(BUILD)/offsample-withpid: $(TOP)/tests/workload/offsample-withpid.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -g -Wall -Wextra -Werror -o $@ $<

modules-all:
	@set -e; for k in $$($(TOP)/tests/vm/kernels.sh); do \
		$(MAKE) --no-print-directory KVER=$$k module; done

test:
	@$(TOP)/tests/run.sh

test-host:
	@$(TOP)/tests/run.sh --host-only

# The developer's quick check: every host suite (the module's checkpatch
# and sparse among them, tests/host/packaging.bats; the machine's own
# install round trip, tests/host/packaging-machine.bats).
check: test-host

# make test-guest [KVER=6.1|6.12|RELEASE ...] [SUITES="30-drain.bats ..."]
# [FILTER=REGEX]: the developer's loop (one small suite in one guest: a
# few minutes).  KVER given on the command line or in the environment
# picks the kernels; otherwise both test kernels.
test-guest:
	@$(if $(filter command line environment,$(origin KVER)),OFFS_KERNELS='$(KVER)') \
		$(if $(SUITES),OFFS_SUITES='$(SUITES)') $(if $(FILTER),OFFS_FILTER='$(FILTER)') \
		$(TOP)/tests/run.sh --guest-only

demo:
	@$(TOP)/tests/vm/demo.sh

# Packaging (DKMS, install/uninstall, .deb, kernel matrix, static checks).
-include $(TOP)/mk/packaging.mk
# Benchmarks against peers (make bench).
-include $(TOP)/mk/bench.mk
# Reliability: stress, fuzz, debug kernel, PREEMPT_RT (make stress, test-debug, test-rt).
-include $(TOP)/mk/stress.mk

clean:
	rm -rf $(BUILD)
