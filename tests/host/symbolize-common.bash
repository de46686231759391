# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the symbolizer suites (symbolize.bats,
# symbolize-debuginfo.bats): where a symbol is in a file, and stacks files
# written by hand in format v2 with "# file:" identity lines.

# vaddr FILE SYMBOL: the symbol's address (nm, mangled names), decimal.
vaddr() {
	local v
	v=$(nm --defined-only "$1" | awk -v s="$2" '$3 == s { print $1; exit }')
	[ -n "$v" ] || { echo "no symbol $2 in $1" >&2; return 1; }
	echo $((16#$v))
}
# symsize FILE SYMBOL: its size (nm -S), decimal.
symsize() {
	local v
	v=$(nm -S --defined-only "$1" | awk -v s="$2" '$4 == s { print $2; exit }')
	echo $((16#$v))
}
# fileoff FILE SYMBOL [DELTA]: file offset of SYMBOL + DELTA: the address
# translated through the PT_LOAD segment that contains it
# (vaddr - p_vaddr + p_offset), printed as 0x... like the module does.
fileoff() {
	local va t off vaddr paddr fsz rest
	va=$(( $(vaddr "$1" "$2") + ${3:-0} ))
	while read -r t off vaddr paddr fsz rest; do
		[ "$t" = LOAD ] || continue
		if [ "$va" -ge $((vaddr)) ] && [ "$va" -lt $((vaddr + fsz)) ]; then
			printf '0x%x\n' $((va - vaddr + off))
			return 0
		fi
	done < <(readelf -lW "$1")
	echo "$2 not in a PT_LOAD of $1" >&2
	return 1
}
# fileline PATH: its "# file:" line as the module prints it (st_dev
# decoded into the kernel's MAJ:MIN).
fileline() {
	local d maj min
	d=$(stat -L -c %d "$1")
	maj=$(( ((d >> 8) & 0xfff) | ((d >> 32) & ~0xfff) ))
	min=$(( (d & 0xff) | ((d >> 12) & ~0xff) ))
	printf '# file: dev=%d:%d ino=%s size=%s mtime=%s path=%s\n' "$maj" "$min" \
		"$(stat -L -c %i "$1")" "$(stat -L -c %s "$1")" "$(stat -L -c %.9Y "$1")" "$1"
}
# header: a v2 drain header up to the columns line.
header() {
	printf '%s\n' '# offsample stacks v2' '# source: drain' '# version: 0.2.0' \
		'# kernel: 6.1.0-56-amd64' '# hostname: symhost' '# generation: 3' \
		'# start: 1700000000.000' '# end: 1700000002.000' '# duration: 2.000' \
		'# hz: 19' '# ticks: 38' '# samples: 9' '# dropped: 0' '# records: 2' \
		'# key: comm,pid,tid,tname,wobj' \
		'# columns: count reason state pid tid comm tname kstack ustack wobj cgroup'
}
