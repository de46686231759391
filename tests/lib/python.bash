# SPDX-License-Identifier: GPL-2.0
# The CPython interpreters the Python-frame tests run (tests/host/upy.bats,
# tests/guest/64-python.bats), and their workload.

# py_interp LABEL: the interpreter's path: "debian" is /usr/bin/python3.11,
# "3.X" the newest pyenv build of 3.X (pyenv's root, $PYENV_ROOT or
# ~/.pyenv, whichever has it); the calling test is skipped when there is
# none.
py_interp() {
	local root p=
	if [ "$1" = debian ]; then
		p=/usr/bin/python3.11
	else
		for root in "$(pyenv root 2>/dev/null)" "${PYENV_ROOT:-}" "$HOME/.pyenv" /root/.pyenv; do
			[ -n "$root" ] || continue
			p=$(ls -d "$root"/versions/"$1".*/bin/python"$1" 2>/dev/null | sort -V | tail -n1)
			[ -z "$p" ] || break
		done
	fi
	[ -n "$p" ] && [ -x "$p" ] || skip "no CPython $1 on this machine"
	echo "$p"
}

# py_start OUT PYTHON [ARGS]: tests/workload/offsample-pywait.py (or
# PY_SCRIPT, e.g. tests/bench/pysleepers.py) in the background, up to its
# "ready" line (60 s); sets PY_PID.
# With PY_WRAP set (e.g. "unshare -p -f --mount-proc", "chroot ROOT"), run
# under it: PY_PID is then the wrapper's.
py_start() {
	local out=$1 py=$2 i
	shift 2
	: > "$out"
	${PY_WRAP:-} "$py" "${PY_SCRIPT:-$TOP/tests/workload/offsample-pywait.py}" "$@" > "$out" 2>&1 3>&- &
	PY_PID=$!
	for i in $(seq 600); do
		grep -qE '^ready( |$)' "$out" && return 0
		kill -0 "$PY_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$out" >&2
	return 1
}

# The Debian 13 root tests/lib/deps.sh python makes (chroot into it), and
# the workload's path in it.
PY_TRIXIE=$TOP/build/deps/trixie-root
PY_TRIXIE_SCRIPT=/opt/offsample/offsample-pywait.py
