#!/bin/bash
# Variants of 0.5.8 (word reads) for KVER ($1) into /tmp/exp2/<K>/<v>/:
#   w1 as is; w4 8-byte reads with __get_user() after a first
#   copy_from_user_nofault(); w5 every read done twice; w6 every rule
#   lookup done twice.
set -e
K=${1:-6.1.0-56-amd64}
KD=/lib/modules/$K/build; [ -d $KD ] || KD=/usr/src/linux-headers-$K
make -C /work/main KVER=$K module >/dev/null
for v in w1 w4 w5 w6; do
	d=/tmp/exp2/$K/$v; rm -rf $d; mkdir -p $d
	cp -L /work/main/build/$K/*.[ch] /work/main/build/$K/Kbuild /work/main/build/$K/VERSION $d/
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
	make -s -C $KD M=$d modules >/dev/null 2>$d/build.err || { cat $d/build.err; exit 1; }
	ls -la $d/offsample.ko
done
