# SPDX-License-Identifier: GPL-2.0
#
# Reliability: stress, fuzz, debug kernel, PREEMPT_RT (docs/RELIABILITY.md).
# Included by the top Makefile (-include $(TOP)/mk/stress.mk).
#
#   make stress       long stress + fuzz suites in a guest per test kernel
#                     (OFFS_KERNELS=default|rt|all|"release ...")
#   make test-debug   build (once, cached in OFFS_DEBUG_CACHE, default
#                     /var/lib/offsample-debug-kernel) a KASAN + lockdep +
#                     kmemleak + UBSAN + DEBUG_OBJECTS kernel, then run the
#                     whole guest suite and the long stress suite on it
#   make test-rt      the whole guest suite and the long stress suite on
#                     Debian's 6.12 PREEMPT_RT kernel
#   make test-atomic  build (once, cached in OFFS_DEBUG_CACHE/atomic)
#                     Debian's 6.1 with voluntary preemption and
#                     DEBUG_ATOMIC_SLEEP, then run the guest suites on it
#
# OFFS_PARTS=core|long (default both) splits test-debug, test-atomic and test-rt into
# two boots: `make test-debug OFFS_PARTS=core`, then OFFS_PARTS=long (the
# whole debug run takes hours under emulation).  OFFS_SUITES="00-load.bats
# 45-cache.bats ..." limits the core part to those guest suites (on the
# debug kernel the core part alone takes about 5 hours: run it in chunks).
#
# The short stress and fuzz suites (tests/guest/70-stress.bats,
# 75-fuzz.bats) run in `make test` like every guest suite; their helper
# programs are built with the workload.

.PHONY: stress test-debug test-atomic test-rt test-matrix stress-helpers

STRESS_HELPERS := $(BUILD)/stress/offs-churn $(BUILD)/stress/offs-fuzz \
	$(BUILD)/stress/offs-memhog

# tests/run.sh runs `make workload` before the guest suites.
workload: $(STRESS_HELPERS)
stress-helpers: $(STRESS_HELPERS)

$(BUILD)/stress/%: $(TOP)/tests/stress/%.c
	@mkdir -p $(BUILD)/stress
	$(CC) -O2 -g -Wall -Wextra -Werror -pthread -o $@ $<

stress:
	@$(TOP)/tests/stress/run.sh stress

test-debug:
	@$(TOP)/tests/stress/run.sh debug

test-atomic:
	@$(TOP)/tests/stress/run.sh atomic

test-rt:
	@$(TOP)/tests/stress/run.sh rt

# Every guest suite on Debian bullseye's 5.10 (tests/vm/test-matrix.sh).
test-matrix:
	@$(TOP)/tests/vm/test-matrix.sh
