#!/bin/bash
# Per-capture parts for each variant window (deltas .0 -> .1).
R=${1:?usage: summary.sh OUT}
printf '%-8s %8s %9s %9s %9s %9s %9s %7s\n' win captures full_us pin_us kstack_us uwalk_us frames/w walks
for f in $R/*-*.0; do
	b=${f%.0}; w=$(basename $b)
	awk -v w=$w 'FNR==NR{a[$1]=$2;next}{d[$1]=$2-a[$1]}
	END{c=d["cache_misses"]; if(!c)c=1;
	printf "%-8s %8d %9.2f %9.2f %9.2f %9.2f %9.2f %7d\n", w, c, d["full_ns_total"]/c/1000,
	  d["full_pin_ns"]/c/1000, d["full_kstack_ns"]/c/1000, d["full_uwalk_ns"]/c/1000,
	  (d["user_walks"]?d["user_frames"]/d["user_walks"]:0), d["user_walks"]}' $f $b.1
done
if [ -f $R/flat.txt ]; then cat $R/flat.txt; fi
