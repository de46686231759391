#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# module/upy.c, the reader of CPython 3.11-3.13 frames (and of the GIL's
# holder) from outside the process (issue 44), compiled for user space (tests/upy/, with
# AddressSanitizer and UndefinedBehaviorSanitizer) and run on live
# interpreters: Debian's python3.11 and pyenv's 3.11, 3.12 and 3.13 (each
# test is skipped on a machine without that interpreter).  Oracles:
# readelf (the symbols the ELF scan finds), py-spy 0.4.3 (every frame's
# function, file and line; the thread that owns the GIL), eu-stack (one C-level evaluation, a native
# _PyEval_EvalFrameDefault frame, per entry mark).  Forged memory (the
# recorded structures, damaged at random) never makes it read out of
# bounds or more than its bounds allow.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

source "$BATS_TEST_DIRNAME/../lib/python.bash"

setup_file() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	U=$BATS_FILE_TMPDIR
	local cc="gcc -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all -I$ROOT/tests/ucfi/shim"
	$cc -o "$U/py-dump" "$ROOT/tests/upy/py-dump.c"
	$cc -o "$U/py-fuzz" "$ROOT/tests/upy/py-fuzz.c"
	PYSPY=$ROOT/build/deps/pyspy/bin/py-spy
	[ -x "$PYSPY" ] || "$ROOT/tests/lib/deps.sh" python
	TOP=$ROOT
	export ROOT U PYSPY TOP
}

teardown() {
	[ -z "${TPID:-}" ] || kill "$TPID" 2>/dev/null || :
}

interp() { py_interp "$@"; }

# start PYTHON [ARGS]: the workload, up to its "ready"; sets TPID.
start() {
	py_start "$U/ready" "$@" && TPID=$PY_PID
}

# The library or executable holding the interpreter (its _PyRuntime).
runtime_file() {
	local f
	for f in $(awk '$6 ~ /^\// { print $6 }' /proc/"$TPID"/maps | sort -u); do
		readelf -W --dyn-syms "$f" 2>/dev/null | awk '$8 == "_PyRuntime" { f = 1 } END { exit !f }' &&
			{ echo "$f"; return; }
	done
	return 1
}

check_scan() {
	local py f want
	py=$(interp "$1")
	start "$py"
	f=$(runtime_file)
	# readelf's values, in py-dump -e's form.
	want=$(readelf -W --dyn-syms "$f" | perl -ane '
		$v{$F[7]} = [hex $F[1], $F[2] =~ /^0x/ ? hex $F[2] : $F[2]] if @F >= 8;
		END {
			printf "runtime=%#x size=%d code_type=%#x unicode_type=%#x eval=%#x-%#x\n",
				$v{_PyRuntime}[0], $v{_PyRuntime}[1], $v{PyCode_Type}[0],
				$v{PyUnicode_Type}[0], $v{_PyEval_EvalFrameDefault}[0],
				$v{_PyEval_EvalFrameDefault}[0] + $v{_PyEval_EvalFrameDefault}[1];
		}')
	run -0 "$U/py-dump" -e "$f"
	assert_output --regexp "^$want version=0x30[bcd]0[0-9a-f]{3}$"
	# Py_Version as the interpreter itself says it.
	run -0 "$py" -c 'import sys; print("version=%#x" % sys.hexversion)'
	local v=$output
	run -0 "$U/py-dump" -e "$f"
	assert_output --partial " $v"
}

# same_as_pyspy: py-dump's view of $TPID in $U/dump equals py-spy's,
# frame for frame, and so does the GIL's holder (the spinner).
same_as_pyspy() {
	local holder spin
	run -0 "$PYSPY" dump --json --pid "$TPID"
	echo "$output" > "$U/spy.json"
	run -0 "$ROOT/tests/upy/py-compare" "$U/dump" "$U/spy.json"
	echo "$output"
	assert_output --regexp 'threads=7 frames=[0-9]+ mismatches=0'
	holder=$(sed -n 's/^gil 0x[0-9a-f]* holder \([0-9]*\)$/\1/p' "$U/dump")
	spin=$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>);
		print join(" ", map { "$_->{os_thread_id}:$_->{thread_name}" } grep { $_->{owns_gil} } @$j)' < "$U/spy.json")
	echo "GIL holder: ours $holder, py-spy $spin"
	[ -n "$holder" ] && [ "$holder:spin" = "$spin" ]
}

check_frames() {
	local py
	py=$(interp "$1")
	start "$py" --depth 40
	run -0 "$U/py-dump" "$TPID"
	echo "$output" > "$U/dump"
	# The five functions of the issue's program, with files and lines.
	local f
	for f in Sleeper.nap hold_lock wait_queue serve spin; do
		grep -qP "^\Q$f\E\t$ROOT/tests/workload/offsample-pywait.py\t[1-9][0-9]*\t" "$U/dump" ||
			{ echo "no $f"; cat "$U/dump"; return 1; }
	done
	same_as_pyspy
	# recurse: 41 frames of it, its caller Thread.run below.
	[ "$(grep -c "^recurse	" "$U/dump")" -eq 41 ]
}

# Each entry mark stands for one native _PyEval_EvalFrameDefault frame.
check_entries() {
	local py tid
	py=$(interp "$1")
	start "$py"
	run -0 "$U/py-dump" "$TPID"
	echo "$output" > "$U/dump"
	run -0 eu-stack -p "$TPID"
	echo "$output" > "$U/native"
	local threads=0
	for tid in $(awk '/^thread / { print $2 }' "$U/dump"); do
		local ours theirs
		ours=$(awk -v t="thread $tid" '/^thread / { on = ($0 == t); next } on && $NF == 1' FS='\t' "$U/dump" | wc -l)
		theirs=$(awk -v t="TID $tid:" '/^TID / { on = ($0 == t); next } on && / _PyEval_EvalFrameDefault/' "$U/native" | wc -l)
		echo "thread $tid: entry marks $ours, _PyEval_EvalFrameDefault frames $theirs"
		[ "$ours" -ge 1 ]
		[ "$ours" -eq "$theirs" ]
		threads=$((threads + 1))
	done
	[ "$threads" -eq 7 ]
	# via_c's thread runs two evaluations (map() calls back into Python).
	grep -q "^wait_event	.*	1$" "$U/dump"
}

check_fuzz() {
	local py
	py=$(interp "$1")
	start "$py" --depth 40
	run -0 "$U/py-fuzz" "$TPID" 20000 "$((0x5eed + ${#1}))"
	echo "$output"
	assert_output --regexp '^rounds=20000 pages=[1-9][0-9]* hot=[1-9][0-9]* '
}

@test "upy: ELF scan of Debian's python3.11 equals readelf, version from the file" { check_scan debian; }
@test "upy: ELF scan of pyenv 3.11 equals readelf" { check_scan 3.11; }
@test "upy: ELF scan of pyenv 3.12 equals readelf" { check_scan 3.12; }
@test "upy: ELF scan of pyenv 3.13 equals readelf" { check_scan 3.13; }

@test "upy: a file that is not CPython is refused (libc, bash)" {
	run -1 "$U/py-dump" -e /usr/lib/x86_64-linux-gnu/libc.so.6
	assert_output --partial "not a CPython 3.11-3.13"
	run -1 "$U/py-dump" -e /usr/bin/bash
	run -1 "$U/py-dump" -e "$ROOT/README.md"
}

@test "upy: Debian's python3.11: every frame of every thread equals py-spy's" { check_frames debian; }
@test "upy: pyenv 3.11: every frame equals py-spy's" { check_frames 3.11; }
@test "upy: pyenv 3.12: every frame equals py-spy's" { check_frames 3.12; }
@test "upy: pyenv 3.13 (_Py_DebugOffsets): every frame equals py-spy's" { check_frames 3.13; }

@test "upy: Debian 13's python3.13 in its own root (chroot): every frame equals py-spy's, the GIL's holder too" {
	[ -x "$PY_TRIXIE/usr/bin/python3.13" ] || fail "no Debian 13 root at $PY_TRIXIE (tests/lib/deps.sh python makes it)"
	run -0 "$U/py-dump" -e "$PY_TRIXIE/usr/bin/python3.13"
	assert_output --regexp ' version=0x30d[0-9a-f]{4}$'
	PY_WRAP="chroot $PY_TRIXIE" PY_SCRIPT=$PY_TRIXIE_SCRIPT start python3.13 --depth 40
	run -0 "$U/py-dump" "$TPID"
	echo "$output" > "$U/dump"
	grep -qP '^hold_lock\t/opt/offsample/offsample-pywait.py\t[1-9]' "$U/dump"
	grep -qP '^Thread.run\t/usr/lib/python3.13/threading.py\t[1-9]' "$U/dump"
	same_as_pyspy
}

@test "upy: Debian's python3.11: one entry mark per native eval frame (eu-stack)" { check_entries debian; }
@test "upy: pyenv 3.12: one entry mark per native eval frame (eu-stack)" { check_entries 3.12; }
@test "upy: pyenv 3.13: one entry mark per native eval frame (eu-stack)" { check_entries 3.13; }

@test "upy: forged memory, Debian's python3.11: 20,000 damaged rounds within bounds" { check_fuzz debian; }
@test "upy: forged memory, pyenv 3.12: 20,000 damaged rounds within bounds" { check_fuzz 3.12; }
@test "upy: forged memory, pyenv 3.13: 20,000 damaged rounds within bounds" { check_fuzz 3.13; }
