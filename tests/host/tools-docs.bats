#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Man pages, examples and the scripts themselves: render without warnings,
# document every command and option the tools accept, examples are valid.
# README.md stays a short user document and docs/README.md an index of
# docs/, their links and pictures valid.
#
#   bats tests/host/tools-docs.bats

load tools-common

setup() {
	T=$BATS_TEST_TMPDIR
	SYMB=$ROOT/tools/offsample-symbolize
	MAN8=$ROOT/docs/man/offsample.8
	MAN4=$ROOT/docs/man/offsample.4
}

@test "scripts: executable, syntax-checked" {
	[ -x "$OFFS" ] && [ -x "$SCO" ] && [ -x "$SCP" ] && [ -x "$SYMB" ] || false
	run -0 bash -n "$OFFS"
	run -0 perl -c "$SCO"
	run -0 perl -c "$SCP"
	run -0 perl -c "$SYMB"
	run -0 perl -c "$ROOT/tools/lib/OffsampleDebuginfo.pm"
	run -0 perl -I"$ROOT/tools/lib" -c "$ROOT/tools/lib/OffsampleDebuginfod.pm"
	run -0 perl -c "$ROOT/tools/lib/offsample-lib.pl"
	run -0 perl -c "$ROOT/tools/lib/offsample-pprof.pl"
	run -0 perl -c "$ROOT/tools/lib/offsample-select.pl"
	local f
	for f in "$ROOT"/tools/lib/offsample-*.sh; do
		run -0 bash -n "$f"
	done
	# set -eu and pipefail in the CLI.
	run -0 grep -c '^set -eu -o pipefail$' "$OFFS"
}

@test "scripts run top to bottom define each function before the first call that needs it" {
	# bash -n does not see it: make bench's tick section once called
	# wait_cfi, defined further down (every tick window failed).
	run -0 "$ROOT/tests/lib/sh-defined-before-use" "$ROOT/tests/bench/bench-inner.sh" \
		"$ROOT/tests/bench/bench.sh" "$ROOT/tests/run.sh" "$ROOT/tests/stress/run.sh" \
		"$ROOT/tests/stress/guest.sh" "$ROOT/tests/vm/run-guest.sh" \
		"$ROOT/tests/vm/test-matrix.sh" "$OFFS"
	# The checker finds the case it was written for.
	printf 'f() {\n\tg\n}\nf\ng() { :; }\n' > "$BATS_TEST_TMPDIR/late.sh"
	run -1 "$ROOT/tests/lib/sh-defined-before-use" "$BATS_TEST_TMPDIR/late.sh"
	assert_output "$BATS_TEST_TMPDIR/late.sh:4: calls g, defined on line 5"
}

@test "tools: every command in a file of its own, no file over 600 lines" {
	local f n c
	for f in "$OFFS" "$SCO" "$SCP" "$SYMB" "$ROOT"/tools/lib/*; do
		n=$(wc -l < "$f")
		[ "$n" -le 600 ] || { echo "$f: $n lines"; return 1; }
	done
	# Each command's cmd_ and help_ functions are defined in exactly one
	# file of tools/lib, none in the front end.
	for c in status record snapshot report collapse flamegraph diff pprof blockers top; do
		run -0 grep -l "^cmd_$c() {" "$ROOT"/tools/lib/offsample-*.sh
		assert_equal "${#lines[@]}" 1
		run -0 grep -l "^help_$c() {" "$ROOT"/tools/lib/offsample-*.sh
		assert_equal "${#lines[@]}" 1
		run -1 grep -q "^cmd_$c() {" "$OFFS"
	done
}

@test "the docs name the version they describe (TOOLS.md, man pages)" {
	local v
	v=$(cat "$ROOT/VERSION")
	run -0 grep -c "offsample $v" "$ROOT/docs/man/offsample.8" "$ROOT/docs/man/offsample.4" "$ROOT/docs/man/offsample-flamegraph.1"
	refute_output --partial ":0"
	run -0 grep -c "^This guide describes offsample $v" "$ROOT/docs/TOOLS.md"
}

@test "--version: every tool prints its name and the version, status 0" {
	local t
	for t in "$OFFS" "$SCO" "$SCP" "$SYMB" "$FG"; do
		run -0 "$t" --version
		assert_output "${t##*/} $(cat "$ROOT/VERSION")"
	done
}

@test "man pages render without groff warnings" {
	local m
	for m in "$MAN8" "$MAN4" "$ROOT/docs/man/offsample-flamegraph.1"; do
		run --separate-stderr groff -man -ww -z "$m"
		assert_success
		assert_equal "$stderr" ""
		assert_output ""
		run --separate-stderr env MANWIDTH=80 man -l "$m"
		assert_success
		assert_equal "$stderr" ""
	done
}

@test "offsample.8 documents every command and every option of the tools' --help" {
	local text c o cmds
	text=$(MANWIDTH=200 man -l "$MAN8" 2>/dev/null)
	# The commands as the dispatcher knows them: a new one cannot go
	# undocumented.
	cmds=$(sed -n 's/^COMMANDS="\(.*\)"$/\1/p' "$OFFS")
	[ "$(wc -w <<< "$cmds")" -ge 12 ]
	for c in $cmds; do
		grep -q "^   $c\$" <<< "$text" || { echo "no section for $c"; return 1; }
		# Long options listed in the command's --help.
		for o in $("$OFFS" "$c" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
			grep -q -- "$o" <<< "$text" || { echo "$c: $o not in offsample.8"; return 1; }
		done
	done
	for o in $("$SCO" --help | grep -o -- '--[a-z][a-z-]*' | sort -u) \
		$("$SCP" --help | grep -o -- '--[a-z][a-z-]*' | sort -u) \
		$("$SYMB" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		grep -q -- "$o" <<< "$text" || { echo "collapse: $o not in offsample.8"; return 1; }
	done
	grep -q "^   offsample-symbolize\$" <<< "$text" || { echo "no section for offsample-symbolize"; return 1; }
	for o in OFFSAMPLE_PROC OFFSAMPLE_SYS OFFSAMPLE_CACHE_DIR FLAMEGRAPH_DIR "EXIT STATUS" "ENVIRONMENT" "FILES" "EXAMPLES" \
		"(replaced)" "(missing)" "# symbolized:" user_stacks max_user_depth "--by wobj" \
		DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH DEBUGINFOD_TIMEOUT OFFSAMPLE_DEBUGINFOD_CLIENT .gnu_debuglink .gnu_debugdata \
		"[I] io" "[Z] sleep" "[D] idle"; do
		grep -qF -- "$o" <<< "$text" || { echo "missing: $o"; return 1; }
	done
}

@test "offsample-flamegraph(1) and flamegraph/README.md document every option of its --help" {
	local text o
	text=$(MANWIDTH=200 man -l "$ROOT/docs/man/offsample-flamegraph.1" 2>/dev/null)
	for o in $("$FG" --help | grep -o -- '--[a-z_][a-z_-]*' | sort -u); do
		grep -q -- "$o" <<< "$text" || { echo "$o not in offsample-flamegraph.1"; return 1; }
		grep -q -- "\`$o" "$ROOT/flamegraph/README.md" || { echo "$o not in flamegraph/README.md"; return 1; }
	done
	# Every page the manuals refer to exists (ours) or is a system page.
	for o in $(grep -ho 'BR offsample[^ ]* ([0-9])' "$ROOT"/docs/man/*.[1-9] | sed 's/.*BR //; s/\\//g; s/ (\([0-9]\))/.\1/' | sort -u); do
		[ -f "$ROOT/docs/man/$o" ] || { echo "SEE ALSO names a missing page: $o"; return 1; }
	done
}

@test "offsample.4 documents every module parameter and /proc file" {
	local text p
	text=$(MANWIDTH=200 man -l "$MAN4" 2>/dev/null)
	# Every parameter the module declares.
	local params
	params=$(sed -n 's/^module_param_cb(\([a-z_]*\),.*/\1/p' "$ROOT/module/params.c")
	[ "$(wc -w <<< "$params")" -ge 18 ]
	for p in $params; do
		grep -qF -- "$p" <<< "$text" || { echo "parameter not documented: $p"; return 1; }
	done
	for p in enabled hz max_stacks max_depth kthreads key thread_cache user_stacks max_user_depth cgroup wobj \
		ustack "# file:" "# blocker:" /proc/offsample/stacks /proc/offsample/drain \
		/proc/offsample/threads /proc/offsample/stats /proc/offsample/control docs/FORMAT.md; do
		grep -qF -- "$p" <<< "$text" || { echo "missing: $p"; return 1; }
	done
	# Defaults as in the module source.
	run -0 grep -c 'hz (1..1000, default 9)' <<< "$text"
	run -0 grep -c 'max_stacks (16..1048576, default 8192)' <<< "$text"
	run -0 grep -c 'max_depth (1..128, default 48)' <<< "$text"
	grep -q 'offs_hz = 9;' "$ROOT/module/params.c"
	grep -q 'offs_max_stacks = 8192;' "$ROOT/module/params.c"
	grep -q 'offs_max_depth = 48;' "$ROOT/module/params.c"
}

@test "examples: cron line, systemd units" {
	local cron=$ROOT/examples/offsample-snapshot.cron
	# Exactly one job line: 5 time fields, the user, the command.
	run -0 grep -Ev '^(#|$|[A-Z]+=)' "$cron"
	assert_equal "${#lines[@]}" 1
	assert_output --regexp '^\*/10 \* \* \* \* root \[ -d /proc/offsample \] && offsample snapshot --keep [0-9]+ --max-age [0-9]+ /var/lib/offsample$'
	# The command it runs works as written, with the cron PATH.
	fake_tree
	mkdir "$T/snaps"
	run -0 env -i PATH="$ROOT/tools:/usr/bin:/bin" OFFSAMPLE_PROC="$FP" OFFSAMPLE_SYS="$FS" \
		sh -c "offsample snapshot --keep 1008 --max-age 7 $T/snaps"
	assert_output ""
	run -0 ls "$T/snaps"
	assert_equal "${#lines[@]}" 1
	local svc=$ROOT/examples/offsample-snapshot.service tmr=$ROOT/examples/offsample-snapshot.timer
	run -0 grep -c '^ExecStart=/usr/local/sbin/offsample snapshot ' "$svc"
	run -0 grep -c '^Type=oneshot$' "$svc"
	run -0 grep -c '^StateDirectory=offsample$' "$svc"
	run -0 grep -c '^OnCalendar=\*:00/10$' "$tmr"
	run -0 grep -c '^WantedBy=timers.target$' "$tmr"
	if command -v systemd-analyze > /dev/null; then
		# Verify with ExecStart pointing at the checkout (the real path
		# does not exist here); only the missing man page may be reported.
		mkdir "$T/units"
		sed "s|/usr/local/sbin/offsample|$OFFS|" "$svc" > "$T/units/offsample-snapshot.service"
		cp "$tmr" "$T/units/"
		run systemd-analyze verify "$T/units/offsample-snapshot.service" "$T/units/offsample-snapshot.timer"
		refute_output --regexp 'Unknown|unknown|Invalid|invalid|not executable|Failed to parse'
	fi
}

@test "make help lists every target a user runs" {
	local t
	run -0 make --no-print-directory -C "$ROOT" help
	for t in module modules-all test test-host check test-guest demo bench stress test-debug test-atomic test-rt test-matrix \
		clean install uninstall deb matrix lint test-dkms-upgrade dkms-src dkms-status; do
		assert_line --regexp "^make (\\[)?$t( |\\]|\$)|\\| $t( |\$)"
	done
	# ... and no target it names is missing from the makefiles.
	for t in $(make --no-print-directory -C "$ROOT" help | sed -n 's/^make \[\{0,1\}\([a-z][a-z-]*\).*/\1/p'); do
		grep -q "^$t:" "$ROOT/Makefile" "$ROOT"/mk/*.mk || { echo "make help names $t, no such target"; return 1; }
	done
}

@test "offsample.8: every command has an example" {
	local c ex cmds
	ex=$(awk '/^\.EX/ { e = 1; next } /^\.EE/ { e = 0 } e' "$MAN8")
	cmds=$(sed -n 's/^COMMANDS="\(.*\)"$/\1/p' "$OFFS")
	[ "$(wc -w <<< "$cmds")" -ge 12 ]
	for c in $cmds; do
		grep -q "offsample $c\b" <<< "$ex" || { echo "no example of offsample $c"; return 1; }
	done
	grep -qF 'offsample record \-F 49 \-o build.stacks \-\- make' <<< "$ex"
}

# --- README.md as a user document, and the docs index (issue 47) ---

# The commands `offsample --help` lists (not `help` itself).
help_commands() {
	"$OFFS" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\).*/\1/p' | grep -vx help | sort -u
}

# doc_time FILE: when FILE last changed, as seconds since the epoch: its
# last commit (now, when it has changes not committed yet), or its mtime
# outside a git checkout.  mtimes say nothing in a fresh clone.
doc_time() {
	local f=$1 t
	if t=$(git -C "$ROOT" log -1 --format=%ct -- "$f" 2>/dev/null) && [ -n "$t" ]; then
		if [ -n "$(git -C "$ROOT" status --porcelain -- "$f" 2>/dev/null)" ]; then
			date +%s
		else
			echo "$t"
		fi
	else
		stat -c %Y "$ROOT/$f"
	fi
}

@test "README.md: a user document of at most 12 KB" {
	local n
	n=$(wc -c < "$ROOT/README.md")
	[ "$n" -le 12288 ] || { echo "README.md is $n bytes (at most 12288: history goes to NEWS.md, details to docs/)"; return 1; }
}

@test "README.md and TOOLS.md's command table name every command of offsample --help" {
	local cmds c table
	cmds=$(help_commands)
	[ "$(wc -w <<< "$cmds")" -ge 12 ]
	# The help and the dispatcher agree.
	assert_equal "$cmds" "$(sed -n 's/^COMMANDS="\(.*\)"$/\1/p' "$OFFS" | tr ' ' '\n' | sort -u)"
	table=$(grep '^| `offsample` |' "$ROOT/docs/TOOLS.md")
	[ -n "$table" ]
	for c in $cmds; do
		grep -q "offsample $c\b" "$ROOT/README.md" || { echo "README.md never shows offsample $c"; return 1; }
		grep -qw -- "$c" <<< "$table" || { echo "docs/TOOLS.md's command table lacks $c"; return 1; }
	done
}

@test "README.md and docs/*.md: no paths of a developer's machine" {
	run grep -nE '(^|[][[:space:]`"'\''(=:;,|])/(work|home|root)/' "$ROOT/README.md" "$ROOT"/docs/*.md
	assert_failure 1
	assert_output ""
}

@test "README.md's pictures exist; the flame graph PNG is not older than the renderer" {
	local img n=0 f png t_png t
	for img in $(grep -oE '\]\([^)#]+\.(png|svg|jpg|gif)\)' "$ROOT/README.md" | sed 's/^](//; s/)$//'); do
		[ -s "$ROOT/$img" ] || { echo "README.md shows a missing picture: $img"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -ge 1 ]
	png=docs/images/offcpu-workload.png
	[ -s "$ROOT/$png" ]
	grep -qF "($png)" "$ROOT/README.md"
	# The picture is drawn by flamegraph/offsample-flamegraph (commands in
	# docs/README.md): a renderer changed since must be followed by a new
	# picture.
	# The SVG is what docs/images/draw.sh's command draws now, byte for
	# byte (the renderer is deterministic).
	run -0 "$OFFS" flamegraph --title 'Off-CPU time of a test workload (offsample, Debian 6.1 guest)' \
		-o "$BATS_TEST_TMPDIR/now.svg" "$ROOT/tests/fixtures/stacks/workload-drain-v2-6.1.0.txt"
	cmp "$BATS_TEST_TMPDIR/now.svg" "$ROOT/docs/images/offcpu-workload.svg" ||
		{ echo "docs/images/offcpu-workload.svg is not what the tools draw now: run docs/images/draw.sh"; return 1; }
	grep -qF "'Off-CPU time of a test workload (offsample, Debian 6.1 guest)'" "$ROOT/docs/images/draw.sh"
	t_png=$(doc_time "$png")
	for f in "$ROOT"/flamegraph/*; do
		case "$f" in *.md) continue ;; esac
		f=${f#"$ROOT"/}
		t=$(doc_time "$f")
		[ "$t_png" -ge "$t" ] || { echo "$png ($(date -u -d @"$t_png")) is older than $f ($(date -u -d @"$t")): draw it again"; return 1; }
	done
}

# slugs FILE: the GitHub anchors of FILE's headings, one a line.
slugs() {
	awk '/^```/ { c = !c; next } !c && sub(/^#+ /, "")' "$1" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}

@test "README.md and docs/README.md: every relative link points to an existing file (and heading)" {
	local doc dir link file anchor n
	for doc in README.md docs/README.md; do
		[ -f "$ROOT/$doc" ] || { echo "no $doc"; return 1; }
		dir=$(dirname "$ROOT/$doc")
		n=0
		while read -r link; do
			case "$link" in http://*|https://*|mailto:*) continue ;; esac
			file=${link%%#*} anchor=
			[ "$file" = "$link" ] || anchor=${link#*#}
			if [ -z "$file" ]; then file=$ROOT/$doc; else file=$dir/$file; fi
			[ -e "$file" ] || { echo "$doc: broken link $link"; return 1; }
			if [ -n "$anchor" ]; then
				slugs "$file" | grep -qx -- "$anchor" || { echo "$doc: no heading #$anchor in ${file#"$ROOT"/}"; return 1; }
			fi
			n=$((n + 1))
		done < <(grep -oE '\]\([^) ]+\)' "$ROOT/$doc" | sed 's/^](//; s/)$//')
		[ "$n" -ge 5 ] || { echo "$doc: only $n links"; return 1; }
	done
}

@test "docs/README.md indexes every document in docs/" {
	local f
	[ -f "$ROOT/docs/README.md" ]
	for f in "$ROOT"/docs/*.md "$ROOT"/docs/examples/*.md "$ROOT"/docs/man/*.[1-9]; do
		f=${f#"$ROOT"/docs/}
		[ "$f" = README.md ] && continue
		grep -qF "($f)" "$ROOT/docs/README.md" || { echo "docs/README.md does not link $f"; return 1; }
	done
	# No raw run folders in docs/, and the index says where they go.
	run -0 find "$ROOT/docs" -mindepth 1 -maxdepth 1 -type d -not -name man -not -name images -not -name examples
	assert_output ""
	grep -q 'build/bench-results/' "$ROOT/docs/README.md"
	grep -qF '(docs/README.md)' "$ROOT/README.md"
}

@test "docs/examples: every output is what the command prints now on the recordings; an edited output is caught" {
	run perl "$ROOT/tests/lib/examples.pl" "$ROOT/docs/examples/README.md"
	assert_success
	assert_output ""
	# Every command the issue names has a section with a real run.
	local c
	for c in report flamegraph diff blockers critical top snapshot; do
		grep -q "^\$ .*offsample $c " "$ROOT/docs/examples/README.md" || { echo "no example run of offsample $c"; return 1; }
	done
	grep -q '^# offsample record .* -- ' "$ROOT/docs/examples/README.md"
	# The check fails when an output is not the tool's.
	sed 's/^  \[P\] ipc                3119   39.74%     164.16$/  [P] ipc                3118   39.74%     164.16/' \
		"$ROOT/docs/examples/README.md" > "$BATS_TEST_TMPDIR/edited.md"
	! cmp -s "$ROOT/docs/examples/README.md" "$BATS_TEST_TMPDIR/edited.md"
	run perl "$ROOT/tests/lib/examples.pl" "$BATS_TEST_TMPDIR/edited.md"
	assert_failure 1
	assert_output --partial "+  [P] ipc                3119   39.74%     164.16"
}
