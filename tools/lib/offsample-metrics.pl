#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
#
# offsample-metrics.pl - Prometheus text exposition for node_exporter's
# textfile collector (`offsample metrics`; not a user command).
#
#   offsample-metrics.pl [--stats FILE] [--prev FILE] [--by cgroup|service]
#                        -- [WINDOW...]
#
# --stats: /proc/offsample/stats (absent or unreadable: offsample_up 0).
# --prev: the file this wrote last time: its counters of thread-seconds
# go on from there, and windows that ended before its last one are not
# counted again (feeding a snapshot directory every time is idempotent).
# WINDOW: drained stacks files (offsample snapshot, record), each a window
# of samples; they are counted in the order they ended.  The text goes
# to standard output.
#
# Perl 5, core modules only.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use OffsampleStacks qw(parse fail fail_on_die);

fail_on_die($ENV{OFFSAMPLE_PROG} // 'offsample metrics');

my (%o, @windows);
while (@ARGV) {
	my $a = shift @ARGV;
	if ($a eq '--') { @windows = @ARGV; last; }
	if ($a =~ /^--(stats|prev|by)\z/) {
		fail(2, "internal: $a needs a value") unless @ARGV;
		$o{$1} = shift @ARGV;
		next;
	}
	fail(2, "internal: unknown argument \"$a\"");
}
fail(2, "internal: --by cgroup or service, not \"$o{by}\"")
	if defined $o{by} && $o{by} !~ /^(cgroup|service)\z/;
my $by = $o{by} // '';

# A label value in the text format: backslash, double quote and newline
# escaped.
sub lv {
	my ($v) = @_;
	$v =~ s/\\/\\\\/g;
	$v =~ s/"/\\"/g;
	$v =~ s/\n/\\n/g;
	return $v;
}
# A number as Prometheus reads it, without exponent noise.
sub num {
	my ($v) = @_;
	return $v if $v =~ /^\d+\z/;
	my $s = sprintf('%.6f', $v);
	$s =~ s/\.?0+\z//;
	return $s;
}

# The systemd unit a cgroup path belongs to: its deepest component that
# ends in .service, else in .scope (a container's or a session's), else
# "-".  Escapes of the stacks format (\xNN) are kept as they are.
sub service_of {
	my ($cg) = @_;
	return '-' if !defined $cg || $cg eq '-' || $cg eq '';
	my @c = grep { $_ ne '' } split m{/}, $cg;
	for my $suffix (qw(.service .scope)) {
		for my $x (reverse @c) {
			return $x if length($x) > length($suffix) && substr($x, -length $suffix) eq $suffix;
		}
	}
	return '-';
}

# ---------------------------------------------------------------- before

# The previous file: thread-seconds so far (by their label set), windows
# counted, and the end of the last one.
my %ts;
my $nwin = 0;
my $last_end;
if (defined $o{prev} && open(my $ph, '<', $o{prev})) {
	while (my $l = <$ph>) {
		if ($l =~ /^offsample_thread_seconds_total\{(.*)\} (\S+)$/) {
			$ts{$1} = $2;
		} elsif ($l =~ /^offsample_windows_total (\d+)$/) {
			$nwin = $1;
		} elsif ($l =~ /^offsample_window_end_timestamp_seconds (\d+(?:\.\d+)?)$/) {
			$last_end = $1;
		}
	}
	close $ph;
	# A file of another grouping: its series would not add up with ours.
	my $want = $by ? qr/^reason="[^"]*",\Q$by\E="/ : qr/^reason="[^"]*"\z/;
	for my $k (keys %ts) {
		delete $ts{$k} unless $k =~ $want;
	}
}

# ---------------------------------------------------------------- windows

my $added = 0;
if (@windows) {
	my $d = parse(@windows);
	for my $g (@{$d->{gens}}) {
		fail(1, "$g->{file}: not a drained window (source: " . ($g->{source} // 'none')
			. "): metrics counts drained files (offsample snapshot, record), not live reads")
			unless ($g->{source} // '') eq 'drain';
		fail(1, "$g->{file}: generation $g->{generation} has no \"# hz:\" or \"# end:\" header line")
			unless ($g->{hz} // '') =~ /^[1-9]\d*\z/ && ($g->{end} // '') =~ /^\d+(?:\.\d+)?\z/;
	}
	my %recs;
	push @{$recs{$_->{gen}}}, $_ for @{$d->{recs}};
	for my $g (sort { $a->{end} <=> $b->{end} } @{$d->{gens}}) {
		next if defined $last_end && $g->{end} <= $last_end;
		for my $r (@{$recs{$g} // []}) {
			my $k = 'reason="' . lv($r->{reason}) . '"';
			$k .= ',cgroup="' . lv($r->{cgroup}) . '"' if $by eq 'cgroup';
			$k .= ',service="' . lv(service_of($r->{cgroup})) . '"' if $by eq 'service';
			$ts{$k} = ($ts{$k} // 0) + $r->{count} / $g->{hz};
		}
		$nwin++;
		$last_end = $g->{end};
		$added++;
	}
}

# ---------------------------------------------------------------- stats

my %st;
my $up = 0;
if (defined $o{stats} && open(my $sh, '<', $o{stats})) {
	while (<$sh>) {
		$st{$1} = $2 if /^(\S+)\s+(\S+)\s*$/;
	}
	close $sh;
	$up = exists $st{ticks} ? 1 : 0;
}

# ---------------------------------------------------------------- out

my $out = '';
sub metric {
	my ($name, $type, $help, @series) = @_;
	return unless @series;
	$out .= "# HELP $name $help\n# TYPE $name $type\n";
	$out .= $_ for @series;
}
sub stat_series {	# stat_series NAME [SCALE]: "NAME VALUE" from a stat
	my ($stat, $scale) = @_;
	my $v = $st{$stat};
	return () unless defined $v && $v =~ /^\d+\z/;
	return num(defined $scale ? $v * $scale : $v);
}

metric('offsample_up', 'gauge', 'Whether the offsample module is loaded and its statistics were readable (1) or not (0).',
	"offsample_up $up\n");
if ($up) {
	my $ver = $st{version} // '';
	my $fmt = $st{format} // '';
	metric('offsample_module_info', 'gauge', 'The loaded module: version and stacks format (value 1).',
		'offsample_module_info{version="' . lv($ver) . '",format="' . lv($fmt) . "\"} 1\n");
	my @g = (
		['offsample_enabled', 'enabled', 'Whether the sampler runs (the enabled parameter).'],
		['offsample_hz', 'hz', 'Sampling rate (ticks per second).'],
		['offsample_memory_bytes', 'memory_bytes', 'Memory the module holds for tables, caches and buffers.'],
		['offsample_stacks_unique', 'stacks_unique', 'Distinct kernel stacks stored now.'],
		['offsample_max_stacks', 'max_stacks', 'The max_stacks bound of the tables.'],
	);
	for my $m (@g) {
		my ($n, $s, $h) = @$m;
		my @v = $s eq 'enabled' && defined $st{enabled} && $st{enabled} =~ /^(Y|N)\z/
			? ($st{enabled} eq 'Y' ? 1 : 0) : stat_series($s);
		metric($n, 'gauge', $h, @v ? "$n $v[0]\n" : ());
	}
	my @fill = stat_series('table_fill_pct', 0.01);
	metric('offsample_table_fill_ratio', 'gauge', 'Fill level of the fuller of the two tables (0 to 1).',
		@fill ? "offsample_table_fill_ratio $fill[0]\n" : ());
	my @c = (
		['offsample_ticks_total', 'ticks', 'Sampler ticks since the module was loaded.'],
		['offsample_ticks_overrun_total', 'ticks_overrun', 'Ticks that took longer than a period.'],
		['offsample_drains_total', 'drains', 'Drains of /proc/offsample/drain.'],
		['offsample_resets_total', 'resets', 'Resets written to /proc/offsample/control.'],
		['offsample_swaps_refused_total', 'swaps_refused', 'Drains and resets refused (EBUSY) because readers held max_retired generations.'],
		['offsample_user_stacks_dropped_total', 'user_dropped', 'User stacks or mapped-file paths that could not be stored.'],
		['offsample_wait_objects_dropped_total', 'wobj_dropped', 'Wait objects that could not be stored.'],
		['offsample_blocker_edges_dropped_total', 'blocker_dropped', 'Waiter to holder edges that could not be stored.'],
		['offsample_cfi_builds_total', 'cfi_built', 'Compiled .eh_frame tables built.'],
		['offsample_cfi_builds_failed_total', 'cfi_failed', 'Compiled .eh_frame table builds that failed.'],
	);
	for my $m (@c) {
		my ($n, $s, $h) = @$m;
		my @v = stat_series($s);
		metric($n, 'counter', $h, @v ? "$n $v[0]\n" : ());
	}
	my @cpu = stat_series('sampler_cpu_ns', 1e-9);
	metric('offsample_sampler_cpu_seconds_total', 'counter', 'CPU time the sampler thread used since the module was loaded.',
		@cpu ? "offsample_sampler_cpu_seconds_total $cpu[0]\n" : ());
	my @r;
	for my $k (sort keys %st) {
		my ($reason) = $k =~ /^samples_([a-z]+)\z/ or next;
		push @r, "offsample_samples_total{reason=\"$reason\"} $st{$k}\n" if $st{$k} =~ /^\d+\z/;
	}
	metric('offsample_samples_total', 'counter', 'Samples counted since the module was loaded, per wait reason (cpu: running).', @r);
	my @d = map { defined $st{"dropped_$_"} && $st{"dropped_$_"} =~ /^\d+\z/
			? ("offsample_dropped_total{why=\"$_\"} " . $st{"dropped_$_"} . "\n") : () } qw(table_full nomem);
	metric('offsample_dropped_total', 'counter', 'Observations that could not be counted, by why (table full, out of memory).', @d);
}
metric('offsample_thread_seconds_total', 'counter',
	'Thread-seconds sampled in the drained windows counted so far (samples / hz), per wait reason'
	. ($by ? " and $by" : '') . '.',
	map { "offsample_thread_seconds_total{$_} " . num($ts{$_}) . "\n" } sort keys %ts);
metric('offsample_windows_total', 'counter', 'Drained windows counted into offsample_thread_seconds_total.',
	"offsample_windows_total $nwin\n");
metric('offsample_window_end_timestamp_seconds', 'gauge', 'When the last window counted ended (Unix time).',
	defined $last_end ? 'offsample_window_end_timestamp_seconds ' . num($last_end) . "\n" : ());
print $out or fail(1, 'write error: ' . lc "$!");
close STDOUT or fail(1, 'write error: ' . lc "$!");
exit 0;
