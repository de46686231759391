# SPDX-License-Identifier: GPL-2.0
#
# OffsampleReport - `offsample report`: the text report of stacks files
# (reasons, groups, top stacks).  Run through offsample-lib.pl (its
# "report" command).  Not a user command.  Perl 5, core modules only.
package OffsampleReport;

use strict;
use warnings;
use Exporter qw(import);
use OffsampleStacks qw(parse frames fail);
use OffsampleText qw(getopts letter rank tag pct utc summary secs);

our @EXPORT_OK = qw(cmd_report mixed_hz_warning);

# ---------------------------------------------------------------- report

# One warning when the generations were sampled at different rates: their
# sample counts do not add up to comparable time.
sub mixed_hz_warning {
	my ($d) = @_;
	my %hz;
	$hz{$_->{hz}} = 1 for grep { ($_->{hz} // '') =~ /^\d+\z/ } @{$d->{gens}};
	return if keys %hz < 2;
	print STDERR "$OffsampleStacks::PROG: warning: the inputs were sampled at different rates ("
		. join(', ', sort { $a <=> $b } keys %hz)
		. " Hz): their sample counts do not compare; --seconds weighs each by 1/hz\n";
}

sub cmd_report {
	my @a = @_;
	my %o = (top => 5, by => 'reason');
	getopts(\@a, \%o, 'top=i', 'by=s', 'offsets', 'label=s@', 'seconds');
	fail(2, "--top must be at least 1") if $o{top} < 1;
	fail(2, "--by must be reason, process, thread, cgroup or wobj, not \"$o{by}\"")
		unless $o{by} =~ /^(process|thread|reason|cgroup|wobj)\z/;
	my @files = @a ? @a : ('-');
	my $d = parse(@files);
	my $labels = $o{label} // [];
	if (!@{$d->{gens}}) {
		fail(1, $d->{bad} ? "no offsample stacks in input ($d->{bad} malformed lines)"
			: "no offsample stacks in input (empty)");
	}
	print STDERR "$OffsampleStacks::PROG: skipped $d->{bad} malformed lines\n" if $d->{bad};
	my @recs = @{$d->{recs}};
	my $s = summary($d);
	my $total = $s->{samples};
	# The weight that orders and makes the percentages: samples, or
	# with --seconds thread-seconds (samples / hz of each generation).
	my $W = $o{seconds} ? \&secs : sub { $_[0]{count} };
	my $wtotal = 0;
	$wtotal += $W->($_) for @recs;
	mixed_hz_warning($d) unless $o{seconds};

	my $have_pid = grep { $_->{pid} ne '-' } @recs;
	my $have_thread = grep { $_->{tid} ne '-' || $_->{tname} ne '-' } @recs;
	if ($o{by} eq 'thread' && !$have_thread && @recs) {
		fail(1, "--by thread needs thread ids or names, but the data has none (key: $s->{key}); record with key=tid or key=tname");
	}
	if ($o{by} =~ /^(cgroup|wobj)\z/ && @recs && !grep { $_->{has}{$o{by}} } @{$d->{gens}}) {
		fail(1, "--by $o{by} needs stacks format v2 (a $o{by} column), but the data is $s->{format}");
	}

	my $out = '';
	$out .= "# offsample report\n";
	my $src = join(', ', @$labels) || join(', ', @files);
	$out .= "# input: $src\n";
	$out .= "# host: $s->{host}\n";
	$out .= "# kernel: $s->{kernel}\n";
	$out .= "# module: $s->{version}, stacks format $s->{format}\n";
	$out .= sprintf("# source: %s, %s %s\n", $s->{source},
		$s->{ngens} == 1 ? 'generation' : "$s->{ngens} generations", $s->{generations});
	$out .= "# start: " . utc($s->{start}) . "\n";
	$out .= "# end: " . utc($s->{end}) . "\n";
	$out .= sprintf("# duration: %.3f s\n", $s->{duration});
	$out .= "# hz: $s->{hz}\n";
	$out .= "# ticks: $s->{ticks}\n";
	$out .= "# samples: $total\n";
	$out .= "# dropped: $s->{dropped}\n";
	$out .= "# key: $s->{key}\n";
	for my $g (@{$d->{gens}}) {
		for my $e (@{$g->{extra}}) {
			next unless $e->[0] =~ /^(recorded-by|pid|cgroup|interrupted|warning|symbolized|filter|unfiltered-samples)\z/;
			$out .= "# $e->[0]: $e->[1]\n";
		}
	}
	my $hid = 0;
	for my $g (@{$d->{gens}}) {
		$hid += $_->[1] for grep { $_->[0] eq 'hidden-idle' && $_->[1] =~ /^\d+\z/ } @{$g->{extra}};
	}
	$out .= sprintf("# left out: %d samples of idle kernel threads (reason idle, %.1f%% of all);"
		. " --include-idle shows them\n", $hid, 100 * $hid / ($total + $hid)) if $hid;
	$out .= "#\n";
	$out .= "# legend: [I] io  [L] lock  [S] sched (run queue)  [Z] sleep  [N] net  [P] ipc\n";
	$out .= "#         [F] fault  [T] stopped  [D] idle  [O] other  [C] cpu  [?] unknown\n";
	$out .= "# thread-s: estimated thread-seconds, samples / hz (off-CPU, except reason cpu)\n";
	$out .= "# order and percent: by thread-seconds (--seconds)\n" if $o{seconds};
	$out .= "# stacks: kernel frames leaf first" . ($o{offsets} ? '' : ' (offsets stripped)')
		. "; user frames follow after \"--\"\n";
	$out .= "# wobj: the system call or object waited on (key=wobj); cgroup: cgroup v2 path\n"
		if grep { $_->{has}{wobj} || $_->{has}{cgroup} } @{$d->{gens}};

	if (!$total || !$wtotal) {
		$out .= "\nNo samples.\n";
		print $out;
		return 0;
	}

	# Reasons table (always).
	my (%rc, %rs);
	my %rw;
	for my $r (@recs) {
		$rc{$r->{reason}} += $r->{count};
		$rs{$r->{reason}} += secs($r);
		$rw{$r->{reason}} += $W->($r);
	}
	my @reasons = sort { $rw{$b} <=> $rw{$a} || rank($a) <=> rank($b) || $a cmp $b } keys %rc;
	my $ssum = 0;
	$ssum += $rs{$_} for @reasons;
	$out .= "\nSamples by reason:\n\n";
	$out .= sprintf("  %-16s %10s %8s %10s\n", 'reason', 'samples', 'percent', 'thread-s');
	for my $x (@reasons) {
		$out .= sprintf("  %-16s %10d %8s %10.2f\n", tag($x) . " $x", $rc{$x},
			pct($rw{$x}, $wtotal), $rs{$x});
	}
	$out .= sprintf("  %-16s %10d %8s %10.2f\n", 'total', $total, '100.00%', $ssum);

	$out .= breakdown(\@recs, $W, $o{seconds}) if grep { $_->{reason} eq 'cpu' } @recs;

	# Groups.
	my $gkey;
	my $plabel = sub {
		my ($r) = @_;
		return $r->{comm} . ($r->{pid} ne '-' ? "[$r->{pid}]" : '');
	};
	if ($o{by} eq 'reason') {
		$gkey = sub { $_[0]{reason} };
	} elsif ($o{by} eq 'process') {
		$gkey = $plabel;
	} elsif ($o{by} eq 'cgroup' || $o{by} eq 'wobj') {
		my $k = $o{by};
		$gkey = sub { $_[0]{$k} };
	} else {
		$gkey = sub {
			my ($r) = @_;
			my $t = $r->{tname} ne '-' ? $r->{tname} : $r->{comm};
			$t .= "[$r->{tid}]" if $r->{tid} ne '-';
			return $plabel->($r) . " / $t";
		};
	}
	my (%gc, %gs, %gw, %grc, %gstack);
	for my $r (@recs) {
		my $gk = $gkey->($r);
		$gc{$gk} += $r->{count};
		$gw{$gk} += $W->($r);
		$gs{$gk} += secs($r);
		$grc{$gk}{$r->{reason}} += $W->($r);
		my ($k, $u) = frames($r, $o{offsets});
		my $sk = join("\n", $r->{reason}, join(';', @$k), join(';', @$u));
		my $e = $gstack{$gk}{$sk} //= { reason => $r->{reason}, k => $k, u => $u,
			count => 0, w => 0, states => {}, who => {}, wobj => {}, cgroup => {} };
		$e->{count} += $r->{count};
		$e->{w} += $W->($r);
		$e->{states}{$r->{state}} = 1;
		$e->{wobj}{$r->{wobj}} += $r->{count};
		$e->{cgroup}{$r->{cgroup}} += $r->{count};
		my $who = $o{by} eq 'thread' ? '' : $o{by} eq 'process'
			? ($r->{tname} ne '-' ? $r->{tname} : '') : $plabel->($r);
		$e->{who}{$who} += $r->{count} if $who ne '';
	}
	my @groups = sort { $gw{$b} <=> $gw{$a} || ($o{by} eq 'reason' ? rank($a) <=> rank($b) : 0) || $a cmp $b } keys %gc;

	if ($o{by} ne 'reason') {
		my $w = 7;
		for (@groups) { $w = length if length > $w; }
		$w = 48 if $w > 48;
		$out .= "\nSamples by $o{by}:\n\n";
		$out .= sprintf("  %-*s %10s %8s %10s  %s\n", $w, $o{by}, 'samples', 'percent', 'thread-s', 'reasons');
		for my $gk (@groups) {
			my $h = $grc{$gk};
			my $rs = join(' ', map { tag($_) . ' ' . pct($h->{$_}, $gw{$gk}) }
				sort { $h->{$b} <=> $h->{$a} || rank($a) <=> rank($b) || $a cmp $b } keys %$h);
			$out .= sprintf("  %-*s %10d %8s %10.2f  %s\n", $w, $gk, $gc{$gk}, pct($gw{$gk}, $wtotal), $gs{$gk}, $rs);
		}
	}

	my @detail = $o{by} eq 'reason' ? @groups : @groups[0 .. ($#groups < $o{top} - 1 ? $#groups : $o{top} - 1)];
	for my $gk (@detail) {
		my $st = $gstack{$gk};
		my @sk = sort { $st->{$b}{w} <=> $st->{$a}{w} || $a cmp $b } keys %$st;
		my $n = @sk;
		my $shown = $n < $o{top} ? $n : $o{top};
		my $title = $o{by} eq 'reason' ? tag($gk) . " $gk" : $gk;
		$out .= sprintf("\n%s: %d samples, %s of all; top %d of %d stack%s\n",
			$title, $gc{$gk}, pct($gw{$gk}, $wtotal), $shown, $n, $n == 1 ? '' : 's');
		my $of = $o{by} eq 'reason' ? $gk : $o{by};
		for my $key (@sk[0 .. $shown - 1]) {
			my $e = $st->{$key};
			$out .= sprintf("\n  %s %7s  %d samples  (%s of %s)  state %s\n",
				tag($e->{reason}), pct($e->{w}, $wtotal), $e->{count},
				pct($e->{w}, $gw{$gk}), $of,
				join('', sort keys %{$e->{states}}));
			my $lbl = $o{by} eq 'process' ? 'threads' : 'processes';
			$out .= top3($lbl, $e->{who});
			# Wait objects and cgroups (format v2), unless all "-" or
			# the grouping already says it.
			for my $x (qw(wobj cgroup)) {
				next if $o{by} eq $x;
				my $h = $e->{$x};
				next unless grep { $_ ne '-' } keys %$h;
				$out .= top3($x, $h);
			}
			$out .= "      $_\n" for @{$e->{k}};
			if (@{$e->{u}}) {
				$out .= "      --\n";
				$out .= "      $_\n" for @{$e->{u}};
			}
		}
	}
	print $out;
	return 0;
}

# The wall-clock breakdown per process, in the style of bperf's Blocked
# Samples (Ahn et al., OSDI 2024): with on-CPU samples (reason cpu) every
# thread counts once per tick whatever it does, so a process's samples
# are its threads' wall time, split into on-CPU in user code (no kernel
# frame), on-CPU in the kernel, and each wait reason.
my @BD = (['cpu-user', 'on CPU, user code'], ['cpu-kern', 'on CPU, kernel'],
	['io'], ['lock'], ['sched', 'runnable, waiting for a CPU'], ['sleep'],
	['net'], ['ipc'], ['other', 'fault, stopped, idle, other']);
sub bd_class {
	my ($r) = @_;
	my $x = $r->{reason};
	return $r->{kstack} eq '-' ? 'cpu-user' : 'cpu-kern' if $x eq 'cpu';
	return $x if $x =~ /^(?:io|lock|sched|sleep|net|ipc)\z/;
	return 'other';
}
sub breakdown {
	my ($recs, $W, $seconds) = @_;
	my (%tot, %by, %secs);
	for my $r (@$recs) {
		my $p = $r->{comm} . ($r->{pid} ne '-' ? "[$r->{pid}]" : '');
		my $w = $W->($r);
		$tot{$p} += $w;
		$secs{$p} += secs($r);
		$by{$p}{bd_class($r)} += $w;
	}
	my @p = sort { $tot{$b} <=> $tot{$a} || $a cmp $b } keys %tot;
	my $max = 20;
	my $more = @p > $max ? @p - $max : 0;
	splice @p, $max if $more;
	my $w = 7;
	for (@p) { $w = length if length > $w; }
	$w = 32 if $w > 32;
	my $out = "\nWall-clock time by process (every thread, every tick: on CPU or waiting):\n\n";
	$out .= sprintf("  %-*s %10s", $w, 'process', 'thread-s');
	$out .= sprintf(" %8s", $_->[0]) for @BD;
	$out .= "\n";
	for my $p (@p) {
		$out .= sprintf("  %-*s %10.2f", $w, length($p) > $w ? substr($p, 0, $w) : $p, $secs{$p});
		for my $c (@BD) {
			my $v = $by{$p}{$c->[0]} // 0;
			$out .= sprintf(" %8s", $v ? sprintf('%.1f%%', 100 * $v / $tot{$p}) : '-');
		}
		$out .= "\n";
	}
	$out .= "  ($more more processes)\n" if $more;
	$out .= "\n  " . join('; ', map { "$_->[0]: $_->[1]" } grep { @$_ > 1 } @BD) . "\n";
	$out .= "  percent of each process's " . ($seconds ? 'thread-seconds' : 'samples') . "\n";
	return $out;
}

# "      LABEL: a 30, b 20, c 10 (+2 more)\n", the three largest, or ''.
sub top3 {
	my ($lbl, $h) = @_;
	my @w = sort { $h->{$b} <=> $h->{$a} || $a cmp $b } grep { $_ ne '' } keys %$h;
	return '' unless @w;
	my @show = @w > 3 ? @w[0 .. 2] : @w;
	return "      $lbl: " . join(', ', map { "$_ $h->{$_}" } @show)
		. (@w > 3 ? sprintf(' (+%d more)', @w - 3) : '') . "\n";
}


1;
