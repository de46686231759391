# SPDX-License-Identifier: GPL-2.0
#
# Benchmarks, included by the top-level Makefile (TOP, BUILD, KVER come from
# there).  docs/BENCHMARKS.md is the result of the last full run.
#
#   make bench                   everything: install, build, boot one guest
#                                (or run here if this kernel loads modules),
#                                measure, write docs/BENCHMARKS.md (raw
#                                results: build/bench-results/<rel>/)
#   make bench BENCH_QUICK=1     a short smoke run; report in build/bench/
#   make bench BENCH_MODE=icount one vCPU under QEMU -icount shift=0: every
#                                time the guest takes is an instruction count
#                                that repeats (docs/BENCHMARKS-icount.md);
#                                a second guest runs it all again and the
#                                report shows both (section A/A)
#   make bench BENCH_AA=0|1      that second run (A/A) or not (default: 1
#                                with BENCH_MODE=icount, 0 otherwise)
#   make bench BENCH_KERNEL=rel  the guest kernel (default: first line of
#                                tests/vm/kernels.sh); a full run on another
#                                kernel writes docs/BENCHMARKS-<rel>.md
#   make bench-insnprof          where a tick's instructions go, function by
#                                function (one icount guest with a QEMU
#                                plugin, tests/bench/insnprof.sh):
#                                INSNPROF_THREADS (1000), INSNPROF_TICKS (6),
#                                INSNPROF_PARAMS (thread_cache=0: cold)
#   make bench-helpers           only build the helper programs
#   make bench-floor [KVER=rel]  only build the empty-walk module (floor)
#
# Loop counts and sizes: BENCH_SIZES, BENCH_PROC_PASSES, BENCH_TICKS_COLD,
# BENCH_TICKS_WARM, BENCH_PIPE_THREADS, BENCH_PIPE_LOOPS, BENCH_PIPE_ROUNDS,
# BENCH_PIPE_PEERS (0: the pipe section without offcputime and perf record),
# BENCH_READ_SIZES, BENCH_READS, BENCH_CFI_THREADS, BENCH_BLK_THREADS,
# BENCH_MODEL_SIZES, BENCH_MODEL_PCTS, BENCH_PY_THREADS, BENCH_PY_DEPTH, BENCH_PY_BIN,
# BENCH_SECTIONS (tick model pipe read cfi blockers waitfor oncpu python; see
# tests/bench/bench-inner.sh).

BENCH_BIN := $(BUILD)/bench

.PHONY: bench bench-helpers bench-floor bench-insnprof

bench-helpers: $(BENCH_BIN)/offsample-sleepers $(BENCH_BIN)/offsample-benchtool \
	$(BENCH_BIN)/offsample-cfidump $(BENCH_BIN)/insnprof.so $(BENCH_BIN)/offsample-insnmark

# -O0 and frame pointers: the call sites that give each thread its own user
# stack must stay distinct, and the module walks user stacks by frame pointer.
$(BENCH_BIN)/offsample-sleepers: $(TOP)/tests/bench/sleepers.c
	@mkdir -p $(BENCH_BIN)
	$(CC) -O0 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-Wall -Wextra -Werror -pthread -o $@ $<

# module/ucfi.c compiled for user space (tests/ucfi/cfi-dump.c): the size
# of the table the module builds from one file (section e).
$(BENCH_BIN)/offsample-cfidump: $(TOP)/tests/ucfi/cfi-dump.c $(TOP)/module/ucfi.c \
		$(TOP)/module/ucfi.h
	@mkdir -p $(BENCH_BIN)
	$(CC) -O2 -Wall -Wextra -Werror -I$(TOP)/tests/ucfi/shim -o $@ $<

$(BENCH_BIN)/offsample-benchtool: $(TOP)/tests/bench/benchtool.c
	@mkdir -p $(BENCH_BIN)
	$(CC) -O2 -g -Wall -Wextra -Werror -o $@ $<

# make bench-insnprof's QEMU plugin and the guest's mark (tests/bench/insnprof/).
INSNPROF_SRC := $(TOP)/tests/bench/insnprof
$(BENCH_BIN)/insnprof.so: $(INSNPROF_SRC)/insnprof.c $(INSNPROF_SRC)/mark.h
	@mkdir -p $(BENCH_BIN)
	$(CC) -O2 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden -o $@ $<

$(BENCH_BIN)/offsample-insnmark: $(INSNPROF_SRC)/mark.c $(INSNPROF_SRC)/mark.h
	@mkdir -p $(BENCH_BIN)
	$(CC) -O2 -Wall -Wextra -Werror -o $@ $<

bench:
	@BUILD='$(BUILD)' $(TOP)/tests/bench/bench.sh

INSNPROF_THREADS ?= 1000
INSNPROF_TICKS ?= 6
INSNPROF_PARAMS ?= thread_cache=0
bench-insnprof:
	@BUILD='$(BUILD)' $(TOP)/tests/bench/insnprof.sh $(INSNPROF_THREADS) \
		$(INSNPROF_TICKS) $(INSNPROF_PARAMS)

# The floor of a tick (tests/bench/walkfloor): a test-only module built
# beside offsample.ko for the same kernel, with the same features.h.
FLOOR_DIR := $(BUILD)/$(KVER)/walkfloor
bench-floor: $(BUILD)/$(KVER)/offsample.ko $(TOP)/tests/bench/walkfloor/walkfloor.c $(TOP)/module/compat.h
	@mkdir -p $(FLOOR_DIR)
	@ln -sf $(TOP)/tests/bench/walkfloor/walkfloor.c $(TOP)/tests/bench/walkfloor/Kbuild \
		$(TOP)/module/compat.h $(FLOOR_DIR)/
	@cp $(BUILD)/$(KVER)/features.h $(FLOOR_DIR)/
	@kdir=$(KDIR); [ -d "$$kdir" ] || kdir=/usr/src/linux-headers-$(KVER); \
	$(MAKE) -C $$kdir M=$(FLOOR_DIR) modules W=1
	@echo "built $(FLOOR_DIR)/offsample_walkfloor.ko"
