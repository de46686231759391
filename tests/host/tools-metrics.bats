#!/usr/bin/env bats
# offsample metrics: Prometheus text for node_exporter's textfile
# collector.  Values checked against the fixtures' own numbers; the text
# checked by promtool and scraped from a real node_exporter (Debian's,
# unpacked by tests/lib/deps.sh metrics into build/deps/prometheus).

load tools-common

PDIR=$ROOT/build/deps/prometheus

setup() {
	T=$BATS_TEST_TMPDIR
	fake_tree "$D61V2"
	W1=$D61V2
	W2=$D612V2
}

teardown() {
	if [ -n "${NE_PID:-}" ]; then
		kill "$NE_PID" 2>/dev/null || true
		wait "$NE_PID" 2>/dev/null || true
	fi
}

# Thread-seconds per reason of stacks files, as the metric prints them:
# "reason seconds" lines (6 decimals, trailing zeros cut), sorted.
expected_seconds() {
	perl -e '
		my %s;
		for my $f (@ARGV) {
			open(my $fh, "<", $f) or die; my $hz;
			while (<$fh>) {
				$hz = $1 if /^# hz: (\d+)/;
				next if /^#/;
				my @f = split /\t/;
				$s{$f[1]} += $f[0] / $hz;
			}
		}
		for (sort keys %s) { (my $v = sprintf("%.6f", $s{$_})) =~ s/\.?0+\z//; print "$_ $v\n" }' "$@"
}
series_seconds() {	# from metrics text on stdin: "reason seconds" lines
	sed -n 's/^offsample_thread_seconds_total{reason="\([a-z]*\)"} \(.*\)$/\1 \2/p' | sort
}

@test "metrics: module health from stats, samples per reason, thread-seconds of a window; promtool finds nothing to say" {
	run --separate-stderr "$OFFS" metrics "$W1"
	assert_success
	assert_equal "$stderr" ""
	assert_line "offsample_up 1"
	assert_line 'offsample_module_info{version="0.1.0",format="1"} 1'
	assert_line "offsample_hz 19"
	assert_line "offsample_ticks_total 1234"
	assert_line 'offsample_samples_total{reason="idle"} 12401'
	assert_line 'offsample_dropped_total{why="table_full"} 2'
	assert_line "offsample_windows_total 1"
	assert_line "offsample_window_end_timestamp_seconds $(sed -n 's/^# end: //p' "$W1" | sed 's/0*$//')"
	assert_equal "$(series_seconds <<< "$output")" "$(expected_seconds "$W1")"
	# Every series has its HELP and TYPE; counters end in _total.
	printf '%s\n' "$output" > "$T/m.prom"
	run -0 "$PDIR/prom/usr/bin/promtool" check metrics < "$T/m.prom"
	assert_output ""
}

@test "metrics -o FILE: counters go on from FILE, windows counted once whatever is fed again, written by rename" {
	local out=$T/tf/offsample.prom
	mkdir "$T/tf"
	run -0 "$OFFS" metrics -o "$out" "$W1"
	assert_output ""
	assert_equal "$(series_seconds < "$out")" "$(expected_seconds "$W1")"
	# Both windows again: only the new one is added (they end later).
	[ "$(sed -n 's/^# end: //p' "$W2" | cut -d. -f1)" -gt "$(sed -n 's/^# end: //p' "$W1" | cut -d. -f1)" ]
	run -0 "$OFFS" metrics -o "$out" "$W1" "$W2"
	run -0 grep -c '^offsample_windows_total 2$' "$out"
	assert_equal "$(series_seconds < "$out")" "$(expected_seconds "$W1" "$W2")"
	# Fed a third time: nothing changes.
	cp "$out" "$T/before"
	run -0 "$OFFS" metrics -o "$out" "$W2" "$W1"
	assert_equal "$(grep -v '^offsample_\(up\|ticks\|samples\)' "$out" | grep thread_seconds)" "$(grep thread_seconds "$T/before")"
	# A directory stands for the snapshots in it; an empty one for none.
	mkdir "$T/snaps" "$T/empty"
	cp "$W1" "$T/snaps/offsample-20261203T000001Z-g2.stacks"
	cp "$W2" "$T/snaps/offsample-20261203T000002Z-g3.stacks"
	cp "$W2" "$T/snaps/other.stacks"
	run -0 "$OFFS" metrics "$T/snaps"
	assert_line "offsample_windows_total 2"
	assert_equal "$(series_seconds <<< "$output")" "$(expected_seconds "$W1" "$W2")"
	run -0 "$OFFS" metrics "$T/empty"
	assert_line "offsample_windows_total 0"
	# No temporary file is left, and none ever had the .prom suffix.
	run -0 find "$T/tf" -type f
	assert_output "$out"
	[ "$(stat -c %a "$out")" = 644 ]
}

@test "metrics --by cgroup|service: one series per reason and cgroup, or systemd unit; label values escaped" {
	run -0 "$OFFS" metrics --by cgroup "$V2S"
	local cg
	cg=$(awk -F'\t' '!/^#/ { print $11 }' "$V2S" | sort -u | head -n1)
	assert_line --regexp "^offsample_thread_seconds_total\\{reason=\"[a-z]+\",cgroup=\"${cg//./\\.}\"\\} [0-9.]+\$"
	run -0 "$OFFS" metrics --by service "$V2S"
	assert_line --regexp '^offsample_thread_seconds_total\{reason="lock",service="app\.service"\} [0-9.]+$'
	# A quote and a backslash in a cgroup path.
	sed 's|/system.slice/app.service|/a"b\\\\c/x.scope|' "$V2S" > "$T/q.stacks"
	run -0 "$OFFS" metrics --by cgroup "$T/q.stacks"
	assert_line --partial 'cgroup="/a\"b\\\\c/x.scope"'
	printf '%s\n' "$output" > "$T/q.prom"
	run -0 "$PDIR/prom/usr/bin/promtool" check metrics < "$T/q.prom"
	run -0 "$OFFS" metrics --by service "$T/q.stacks"
	assert_line --partial 'service="x.scope"'
	# A file of another grouping: its series are not carried over.
	run -0 "$OFFS" metrics -o "$T/g.prom" "$V2S"
	run -0 "$OFFS" metrics -o "$T/g.prom" --by service "$V2S"
	run -1 grep -c '^offsample_thread_seconds_total{reason="[a-z]*"} ' "$T/g.prom"
}

@test "metrics: module not loaded is offsample_up 0 (exit 0, counters kept); bad windows and options are errors" {
	run -0 "$OFFS" metrics -o "$T/a.prom" "$W1"
	OFFSAMPLE_PROC=$T/absent run --separate-stderr "$OFFS" metrics -o "$T/a.prom"
	assert_success
	assert_equal "$stderr" ""
	run -0 grep -c '^offsample_up 0$' "$T/a.prom"
	run -1 grep -c '^offsample_ticks_total' "$T/a.prom"
	assert_equal "$(series_seconds < "$T/a.prom")" "$(expected_seconds "$W1")"
	# A live read is not a window.
	sed 's/^# source: drain$/# source: stacks/' "$W1" > "$T/live.stacks"
	run --separate-stderr "$OFFS" metrics "$T/live.stacks"
	assert_failure 1
	assert_equal "$stderr" "offsample metrics: $T/live.stacks: not a drained window (source: stacks): metrics counts drained files (offsample snapshot, record), not live reads"
	# A window cut short: refused, or counted with --force.
	head -n 30 "$W1" > "$T/cut.stacks"
	run --separate-stderr "$OFFS" metrics "$T/cut.stacks"
	assert_failure 1
	assert_regex "$stderr" "^offsample metrics: $T/cut.stacks: cut short or damaged: "
	run --separate-stderr "$OFFS" metrics --force "$T/cut.stacks"
	assert_success
	run -2 "$OFFS" metrics --by pid "$W1"
	run -2 "$OFFS" metrics - < "$W1"
	run -1 "$OFFS" metrics -o "$T/nodir/x.prom" "$W1"
	run -1 "$OFFS" metrics "$T/missing"
	run -0 "$OFFS" metrics --help
	assert_line --partial "node_exporter"
}

@test "metrics: node_exporter's textfile collector serves the series with their values" {
	local ne=$PDIR/ne/usr/bin/prometheus-node-exporter port i body
	[ -x "$ne" ] || fail "no node_exporter: tests/lib/deps.sh metrics unpacks it"
	mkdir "$T/tf"
	run -0 "$OFFS" metrics --by service -o "$T/tf/offsample.prom" "$W1" "$V2S"
	port=$(( 20000 + RANDOM % 20000 ))
	"$ne" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
		--collector.textfile --collector.textfile.directory="$T/tf" > "$T/ne.log" 2>&1 &
	NE_PID=$!
	for i in $(seq 1 100); do
		body=$(curl -fsS "http://127.0.0.1:$port/metrics" 2>/dev/null) && break
		sleep 0.1
	done
	[ -n "$body" ] || { cat "$T/ne.log"; fail "node_exporter did not answer"; }
	# Read without error, and our series as we wrote them.
	grep -q '^node_textfile_scrape_error 0$' <<< "$body"
	grep -q '^offsample_up 1$' <<< "$body"
	grep -q '^offsample_windows_total 2$' <<< "$body"
	# Every series we wrote, with its value (node_exporter sorts the
	# labels and may print numbers its own way).
	printf '%s\n' "$body" > "$T/body"
	run -0 perl -e '
		sub load {
			my %m;
			open(my $f, "<", $_[0]) or die;
			while (<$f>) {
				next unless /^(offsample_\w+)(?:\{(.*)\})? (\S+)$/;
				my ($n, $lab, $v) = ($1, $2 // "", $3);
				my @l = sort($lab =~ /(\w+="(?:[^"\\]|\\.)*")/g);
				$m{"$n\{" . join(",", @l) . "}"} = $v;
			}
			return %m;
		}
		my %w = load($ARGV[0]); my %s = load($ARGV[1]); my $bad = 0;
		for (sort keys %w) {
			next if exists $s{$_} && abs($s{$_} - $w{$_}) <= 1e-9 * (1 + abs $w{$_});
			print "not served: $_ $w{$_} (", $s{$_} // "none", ")\n"; $bad++;
		}
		print scalar(keys %w), " series\n"; exit $bad' "$T/tf/offsample.prom" "$T/body"
	assert_output --regexp '^[0-9]+ series$'
	[ "${output%% *}" -ge 25 ]
	grep -q '^offsample_thread_seconds_total{reason="lock",service="app.service"} ' <<< "$body"
}
