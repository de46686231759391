# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/vm/demo.sh and tests/bench/bench.sh: where the module
# can be loaded.  can_load_here: true if this kernel takes modules (its
# headers are installed and we are root); otherwise a guest is booted.
can_load_here() {
	[ -e /proc/modules ] && [ -d "/lib/modules/$(uname -r)/build" ] &&
		[ "$(id -u)" -eq 0 ]
}

# where_setup GROUP...: settle $where (auto: here if this kernel takes
# modules, else a guest), then install the tests/lib/deps.sh groups needed
# (plus vm for a guest).  Needs TOP.
where_setup() {
	if [ "$where" = auto ]; then
		if can_load_here; then where=host; else where=guest; fi
	fi
	echo "== installing what is missing"
	if [ "$where" = guest ]; then
		"$TOP/tests/lib/deps.sh" vm "$@"
	else
		"$TOP/tests/lib/deps.sh" "$@"
	fi
	hash -r
}
