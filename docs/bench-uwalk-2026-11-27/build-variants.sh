#!/bin/bash
# Build experiment variants of the module for KVER ($1) into /tmp/exp/<v>/.
set -e
K=${1:-6.1.0-56-amd64}
KD=/lib/modules/$K/build; [ -d $KD ] || KD=/usr/src/linux-headers-$K
make -C /work/main KVER=$K module >/dev/null
for v in v0 v1 v2 v3; do
	d=/tmp/exp/$K/$v; rm -rf $d; mkdir -p $d
	cp -L /work/main/build/$K/*.[ch] /work/main/build/$K/Kbuild /work/main/build/$K/VERSION $d/
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
	esac
	make -s -C $KD M=$d modules >/dev/null 2>$d/build.err || { cat $d/build.err; exit 1; }
	ls -la $d/offsample.ko
done
