# SPDX-License-Identifier: GPL-2.0
# SPLAT_RE: an extended regular expression matching the kernel log lines
# that report a problem: BUG (KASAN reports included), WARNING (lockdep's
# reports included), Oops, UBSAN, debugobjects, hung tasks, soft lockups,
# RCU stalls, sleeping in atomic context.  Not kmemleak's "N new suspected
# memory leaks": it does not say whose, and a kernel can leak at boot;
# tests/guest/debug/80-kmemleak.bats and tests/stress/run.sh look for
# offsample's objects in /sys/kernel/debug/kmemleak instead.  It does not
# match what a debug kernel logs when all is well (the checkers announcing
# themselves at boot: "kasan: KernelAddressSanitizer initialized", "RCU
# lockdep checking is enabled", "kmemleak: ... initialized").
# Sourced by tests/guest/lib.bash (dmesg_clean) and tests/stress/run.sh;
# tests/host/splat.bats checks it against real lines of both kinds.
# shellcheck disable=SC2034
SPLAT_RE='BUG:|WARNING:|Oops|general protection|Call Trace|UBSAN:'
SPLAT_RE+='|possible (circular|recursive) locking|inconsistent lock state'
SPLAT_RE+='|suspicious RCU usage|DEBUG_LOCKS_WARN_ON|non-static key'
SPLAT_RE+='|turning off the locking correctness validator'
SPLAT_RE+='|ODEBUG:|hung_task|blocked for more than'
SPLAT_RE+='|soft lockup|rcu_.*stall|RCU stall|INFO: task'
SPLAT_RE+='|sleeping function called|scheduling while atomic'
