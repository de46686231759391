#!/bin/bash
# build-variants.sh KVER VARIANT...: build experiment variants of the
# module for KVER into ${EXP:-/tmp/exp}/KVER/VARIANT/, each from a copy of
# this tree's build/KVER/ sources with one patch (each patch asserts the
# code it replaces, so a variant fails to build on the wrong commit):
#   on commit 5b397e8 (0.5.7, 512-byte reads):
#     v0 as is; v1 every read its own copy_from_user_nofault(); v2 the
#     walk twice, the second timed; v3 64-byte chunks
#   on commit d040639 (0.5.8, word reads):
#     w1 as is; w4 8-byte reads with __get_user() after a first
#     copy_from_user_nofault(); w5 every read done twice; w6 every rule
#     lookup done twice
# The experiments of 2026-11-27 and their results: docs/BENCHMARKS-tick.md,
# "User-walk experiments" (their raw counters are not kept in the tree).
set -e
[ $# -ge 2 ] || { echo "usage: build-variants.sh KVER VARIANT..." >&2; exit 2; }
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
K=$1; shift
KD=/lib/modules/$K/build; [ -d $KD ] || KD=/usr/src/linux-headers-$K
make -C "$TOP" KVER=$K module >/dev/null
for v in "$@"; do
	d=${EXP:-/tmp/exp}/$K/$v; rm -rf $d; mkdir -p $d
	cp -L "$TOP"/build/$K/*.[ch] "$TOP"/build/$K/Kbuild "$TOP"/build/$K/VERSION $d/
	case $v in
	v1)	# no chunk: each read is its own copy_from_user_nofault()
		python3 - $d/umm.c <<'PY'
import sys; p=sys.argv[1]; s=open(p).read()
a="\tif (len <= room) {\n\t\troom = min_t"
assert a in s; s=s.replace(a,"\tif (0) {\n\t\troom = min_t"); open(p,'w').write(s)
PY
		;;
	v3)	# 64-byte chunks
		sed -i 's/^#define OFFS_UCHUNK\t\t512/#define OFFS_UCHUNK\t\t64/' $d/umm.c
		grep -q "OFFS_UCHUNK.*64" $d/umm.c ;;
	v2)	# the walk twice, the second (everything touched) timed
		python3 - $d/pin.c <<'PY'
import sys; p=sys.argv[1]; s=open(p).read()
a="\toffs_user_walk(t, s);\n\tif (s->timed)"
assert a in s
s=s.replace(a,"\toffs_user_walk(t, s);\n\tif (s->timed)\n\t\tc1 = local_clock();\n\toffs_user_walk(t, s);\n\tif (s->timed)"); open(p,'w').write(s)
PY
		;;
	w*)
		python3 - $d/umm.c $v <<'PY'
import sys; p, v = sys.argv[1], sys.argv[2]; s = open(p).read()
read_old = """static int offs_umm_read(void *ctx, u64 addr, void *buf, size_t len)
{
	return copy_from_user_nofault(buf, (const void __user *)addr, len) ?
	       -EFAULT : 0;
}
"""
assert read_old in s
if v == 'w5':
    s = s.replace(read_old, """static int offs_umm_read(void *ctx, u64 addr, void *buf, size_t len)
{
	if (copy_from_user_nofault(buf, (const void __user *)addr, len))
		return -EFAULT;
	return copy_from_user_nofault(buf, (const void __user *)addr, len) ?
	       -EFAULT : 0;
}
""")
if v == 'w4':
    s = s.replace("\tunsigned int memo_hits;\t/* rules found in offs_rmemo */\n",
                  "\tunsigned int memo_hits;\t/* rules found in offs_rmemo */\n\tbool checked;\n")
    s = s.replace("\tuc.memo_hits = 0;\n", "\tuc.memo_hits = 0;\n\tuc.checked = false;\n")
    s = s.replace(read_old, """static int offs_umm_read(void *ctx, u64 addr, void *buf, size_t len)
{
	struct offs_uctx *uc = ctx;
	u64 v;
	int err;

	if (len != 8 || !uc->checked) {
		err = copy_from_user_nofault(buf, (const void __user *)addr, len) ?
		      -EFAULT : 0;
		if (!err)
			uc->checked = true;
		return err;
	}
	if (!access_ok((const void __user *)addr, 8))
		return -EFAULT;
	pagefault_disable();
	err = __get_user(v, (const u64 __user *)addr);
	pagefault_enable();
	if (err)
		return -EFAULT;
	memcpy(buf, &v, 8);
	return 0;
}
""")
if v == 'w6':
    a = "static const struct offs_cfi_rule *offs_umm_rule(void *ctx, u64 pc)\n{"
    assert a in s
    s = s.replace(a, "static const struct offs_cfi_rule *offs_umm_rule1(void *ctx, u64 pc)\n{")
    b = "static int offs_umm_read(void *ctx"
    s = s.replace(b, """static const struct offs_cfi_rule *offs_umm_rule(void *ctx, u64 pc)
{
	offs_umm_rule1(ctx, pc);
	return offs_umm_rule1(ctx, pc);
}

""" + b, 1)
open(p, 'w').write(s)
PY
		;;
	esac
	make -s -C $KD M=$d modules >/dev/null 2>$d/build.err || { cat $d/build.err; exit 1; }
	ls -la $d/offsample.ko
done
