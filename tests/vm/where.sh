# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/vm/demo.sh and tests/bench/bench.sh: where the module
# can be loaded.  can_load_here: true if this kernel takes modules (its
# headers are installed and we are root); otherwise a guest is booted.
can_load_here() {
	[ -e /proc/modules ] && [ -d "/lib/modules/$(uname -r)/build" ] &&
		[ "$(id -u)" -eq 0 ]
}
