#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
#
# Helpers of tools/offsample (the bash CLI) that are easier in Perl:
# one refresh of `top`, the record filter, flame graph titles, status and
# snapshot retention; the text report is OffsampleReport.pm.
# Not a user command: tools/offsample runs it as
#
#   perl offsample-lib.pl COMMAND [OPTIONS] [ARGS]
#
# with the name to use in messages in $OFFSAMPLE_PROG.  Errors are one line
# on stderr with that prefix; status 1 (input) or 2 (usage).
#
# Perl 5, core modules only.
use strict;
use warnings;
use Getopt::Long qw(GetOptionsFromArray :config no_ignore_case bundling no_auto_abbrev);
use FindBin;
use lib $FindBin::RealBin;
use OffsampleStacks qw(parse kfunc ufunc frames renumber_edge @V1 fail fail_on_die line_kind column_index damage);
use OffsampleText qw(getopts @REASONS letter rank tag pct utc uniq_join summary secs);
use OffsampleReport qw(cmd_report);
use OffsampleBlockers qw(cmd_blockers cmd_waitcrit);

my $PROG = $ENV{OFFSAMPLE_PROG} || 'offsample';
fail_on_die($PROG);
$SIG{__WARN__} = sub { };


# ---------------------------------------------------------------- needsym

# needsym FILE...: exit 0 when a generation of the files has a ustack
# column with frames not named yet (PATH+0xOFFSET, or [anon]+0xADDRESS
# and [busy]+0xADDRESS: JIT code) and no "# symbolized:" line
# (offsample-symbolize has not seen it), else 1.
sub cmd_needsym {
	my @a = @_;
	for my $file (@a) {
		open(my $fh, '<', $file) or next;
		my ($ucol, $done);
		while (my $line = <$fh>) {
			my ($kind, @v) = line_kind($line);
			if ($kind ne 'record' && $kind ne 'blank') {
				if ($kind eq 'gen') {
					($ucol, $done) = (undef, 0);
				} elsif ($kind eq 'header' && $v[0] eq 'symbolized') {
					$done = 1;
				} elsif ($kind eq 'columns') {
					my @n = @{$v[0]};
					($ucol) = grep { $n[$_] eq 'ustack' } 0 .. $#n;
				}
				next;
			}
			next if !defined $ucol || $done;
			my @f = split /\t/, $line, -1;
			next unless defined $f[$ucol];
			if ($f[$ucol] =~ m{(?:^|;)(?:/[^;]*|\[(?:anon|busy)\])\+0x[0-9a-fA-F]+\r?\n?(?:;|\z)}) {
				close $fh;
				return 0;
			}
		}
		close $fh;
	}
	return 1;
}

# ---------------------------------------------------------------- top

# One refresh: what was counted between PREV and CUR (two reads of the live
# stacks file).  Without --prev, or when the generation changed, CUR alone;
# a session's window (module 0.7) is what was counted since the last one.
sub cmd_top {
	my @a = @_;
	my %o = (top => 10, width => 0);
	getopts(\@a, \%o, 'prev=s', 'top=i', 'width=i', 'interval=s', 'iteration=i', 'include-idle');
	fail(2, "internal: top needs one file") unless @a == 1;
	my $cur = parse($a[0]);
	fail(1, "no offsample stacks in $a[0]") unless @{$cur->{gens}};
	my $cg = $cur->{gens}[0];
	my $prev = defined $o{prev} && -s $o{prev} ? parse($o{prev}) : undef;
	my $pg = $prev && @{$prev->{gens}} ? $prev->{gens}[0] : undef;
	my $note = '';
	my %base;
	my $ticks = $cg->{ticks} // 0;
	my $what;
	if (($cg->{source} // '') eq 'session') {
		$what = sprintf('last %.1f s', $cg->{duration} // 0);
	} elsif ($pg && ($pg->{generation} // '') eq ($cg->{generation} // '')) {
		for my $r (@{$prev->{recs}}) {
			my $k = $r->{line};
			$k =~ s/^\d+\t//;
			$base{$k} += $r->{count};
		}
		$ticks -= $pg->{ticks} // 0;
		$what = sprintf('last %s s', $o{interval} // '?');
	} elsif ($pg) {
		$note = sprintf("generation changed (%s -> %s): samples before the drain or reset went to another reader\n",
			$pg->{generation} // '?', $cg->{generation} // '?');
		$what = sprintf('since generation start (%.1f s)', $cg->{duration} // 0);
	} else {
		$what = sprintf('since generation start (%.1f s)', $cg->{duration} // 0);
	}
	$ticks = 0 if $ticks < 0;
	my (%delta, %rc, $total, $hid);
	($total, $hid) = (0, 0);
	for my $r (@{$cur->{recs}}) {
		my $k = $r->{line};
		$k =~ s/^\d+\t//;
		my $c = $r->{count} - ($base{$k} // 0);
		next if $c <= 0;
		if ($r->{reason} eq 'idle' && !$o{'include-idle'}) {
			$hid += $c;	# idle kernel threads: left out, counted
			next;
		}
		$delta{$k} += $c;
		$rc{$r->{reason}} += $c;
		$total += $c;
	}
	my %byk = map { my $k = $_->{line}; $k =~ s/^\d+\t//; ($k => $_) } @{$cur->{recs}};
	my $out = '';
	$out .= sprintf("offsample top - %s %s - generation %s - %s\n",
		$cg->{hostname} // '-', $cg->{kernel} // '-', $cg->{generation} // '-',
		utc($cg->{end}));
	$out .= $note;
	# Thread time: samples / hz (what offcputime calls time waited).
	my $hz = $cg->{hz} && $cg->{hz} > 0 ? $cg->{hz} : 0;
	my $ts = sub { $hz ? sprintf('%.2f', $_[0] / $hz) : '-' };
	$out .= sprintf("%s: %s thread-s (%d samples), %d ticks at %s Hz\n", $what, $ts->($total), $total, $ticks, $cg->{hz} // '?');
	my @rs = sort { $rc{$b} <=> $rc{$a} || rank($a) <=> rank($b) || $a cmp $b } keys %rc;
	$out .= 'reasons: ' . (@rs ? join('  ', map { tag($_) . " $_ " . pct($rc{$_}, $total) } @rs) : '-') . "\n";
	$out .= sprintf("left out: %d samples of idle kernel threads (%s of all); --include-idle shows them\n",
		$hid, pct1($hid, $total + $hid)) if $hid;
	$out .= "\n";
	if (!$total) {
		$out .= "  (no new samples)\n";
	} else {
		$out .= sprintf("  %7s %8s %8s %-3s %-16s %s\n", 'percent', 'thread-s', 'samples', '', 'process', 'stack (leaf first)');
		my @ks = sort { $delta{$b} <=> $delta{$a} || $a cmp $b } keys %delta;
		@ks = @ks[0 .. $o{top} - 1] if @ks > $o{top};
		for my $k (@ks) {
			my $r = $byk{$k};
			my ($kf, $uf) = frames($r, 0);
			my @f = @$kf;
			shift @f while @f > 1 && $f[0] =~ /^(__schedule|schedule)\z/;
			my $stack = join(' < ', @f, @$uf);
			my $proc = $r->{comm} . ($r->{pid} ne '-' ? "[$r->{pid}]" : '');
			$proc .= "/$r->{tname}" if $r->{tname} ne '-';
			my $line = sprintf("  %7s %8s %8d %-3s %-16s %s", pct($delta{$k}, $total), $ts->($delta{$k}), $delta{$k},
				tag($r->{reason}), $proc, $stack);
			$line = substr($line, 0, $o{width} - 1) if $o{width} > 1 && length($line) >= $o{width};
			$out .= "$line\n";
		}
	}
	print $out;
	return 0;
}

# ---------------------------------------------------------------- record filter

# Copy a drained file from stdin to stdout, adding "# name: value" header
# lines (before "# columns:") and, with --pids, keeping only the records of
# those processes (the samples and records header lines are recomputed).
sub cmd_filter {
	my @a = @_;
	my %o;
	getopts(\@a, \%o, 'pids=s', 'header=s@');
	my %keep;
	my $filter = defined $o{pids};
	if ($filter) {
		$keep{$_} = 1 for grep { /^\d+\z/ } split /[\s,]+/, $o{pids};
	}
	my (@hdr, @recs, @edges, %newid);
	my %col = %{column_index(@V1)};
	my ($nrec, $nsamp, $allrec, $allsamp) = (0, 0, 0, 0);
	while (my $line = <STDIN>) {
		my ($kind, @v) = line_kind($line);
		# Edges name records by position: renumbered below, after them.
		if ($kind eq 'edge') {
			push @edges, $line;
			next;
		}
		if ($kind ne 'record' && $kind ne 'blank') {
			%col = %{column_index(@{$v[0]})} if $kind eq 'columns';
			push @hdr, $line;
			next;
		}
		my @f = split /\t/, $line;
		my $c = $f[$col{count}] // '';
		$allrec++;
		$allsamp += $c if $c =~ /^\d+$/;
		if ($filter) {
			my $pid = $f[$col{pid} // 3] // '-';
			next unless $keep{$pid};
		}
		$nrec++;
		$newid{$allrec} = $nrec;
		$nsamp += $c if $c =~ /^\d+$/;
		push @recs, $line;
	}
	fail(1, "drain output is empty") unless @hdr && (line_kind($hdr[0]))[0] eq 'gen';
	my @add = map { "# $_\n" } @{$o{header} // []};
	if ($filter) {
		# An edge stays if its waiter's record did; a holder's record
		# that went becomes "hrec=-".
		@edges = grep { defined } map { renumber_edge($_, \%newid) } @edges;
		push @add, "# unfiltered-samples: $allsamp\n", "# unfiltered-records: $allrec\n";
		for (@hdr) {
			s/^# samples: .*/# samples: $nsamp/;
			s/^# records: .*/# records: $nrec/;
			s/^# blockers: .*/# blockers: @{[scalar @edges]}/;
		}
	}
	my $at = @hdr;
	for my $i (1 .. $#hdr) {
		if ($hdr[$i] =~ /^# columns:/) { $at = $i; last; }
	}
	splice @hdr, $at, 0, @add;
	print @hdr, @recs, @edges or fail(1, "write error: " . lc "$!");
	close STDOUT or fail(1, "write error: " . lc "$!");
	return 0;
}

# ---------------------------------------------------------------- jit

# jit IN OUT: IN (a recording just drained) with the JIT map entries its
# [anon]/[busy] frames fall in, read from the running processes now, as
# "# jit-maps:" and "# jit:" header lines (docs/FORMAT.md), written to
# OUT.  Exit 0 when OUT was written; 3 when IN has no such frame (or has
# the lines already): OUT is not written, IN is the recording as it is.
sub cmd_jit {
	my @a = @_;
	fail(2, "jit: IN OUT expected") unless @a == 2;
	require OffsampleJit;
	no warnings 'once';
	$OffsampleJit::ME = 'offsample';
	open(my $in, '<', $a[0]) or fail(1, "cannot read $a[0]: " . lc "$!");
	my $buf = '';
	open(my $mem, '>', \$buf) or fail(1, 'out of memory');
	OffsampleJit::capture($in, $mem) or return 3;
	close $mem;
	open(my $out, '>', $a[1]) or fail(1, "cannot write $a[1]: " . lc "$!");
	print $out $buf or fail(1, "cannot write $a[1]: " . lc "$!");
	close $out or fail(1, "cannot write $a[1]: " . lc "$!");
	return 0;
}

# ---------------------------------------------------------------- title

# hidden_idle(DATA): the samples of idle kernel threads that the reading
# command left out ("# hidden-idle:" lines, offsample-select.pl).
sub hidden_idle {
	my ($d) = @_;
	my $n = 0;
	for my $g (@{$d->{gens}}) {
		$n += $_->[1] for grep { $_->[0] eq 'hidden-idle' && $_->[1] =~ /^\d+\z/ } @{$g->{extra}};
	}
	return $n;
}
sub pct1 {
	my ($n, $of) = @_;
	return $of ? sprintf('%.1f%%', 100 * $n / $of) : '0%';
}

sub cmd_title {
	my @a = @_;
	my %o;
	getopts(\@a, \%o, 'subtitle');
	my $d = parse(@a ? @a : '-');
	fail(1, "no offsample stacks in input") unless @{$d->{gens}};
	my $s = summary($d);
	if ($o{subtitle}) {
		my $hid = hidden_idle($d);
		printf "%d samples at %s Hz, %s to %s, offsample %s%s\n", $s->{samples}, $s->{hz},
			utc($s->{start}), utc($s->{end}), $s->{version},
			$hid ? sprintf('; idle kernel threads left out (%s of all samples): --include-idle shows them',
				pct1($hid, $s->{samples} + $hid)) : '';
	} else {
		my $dur = $s->{duration};
		my $ds = $dur >= 100 ? sprintf('%.0f s', $dur) : sprintf('%.1f s', $dur);
		# Running threads are sampled too (reason cpu, module 0.4): then
		# the graph is not of off-CPU time alone.
		my $what = (grep { $_->{reason} eq 'cpu' } @{$d->{recs}})
			? 'Off- and on-CPU time' : 'Off-CPU time';
		printf "%s: %s, %s, %s\n", $what, $s->{host}, $s->{kernel}, $ds;
	}
	return 0;
}

# ---------------------------------------------------------------- status

sub cmd_status {
	my @a = @_;
	fail(2, "status: STATS and SYSDIR expected") unless @a == 2;
	my ($stats, $sys) = @a;
	open(my $fh, '<', $stats) or fail(1, "cannot read $stats: " . lc "$!");
	my %st;
	my @order;
	while (<$fh>) {
		next unless /^(\S+)\s+(.*?)\s*$/;
		push @order, $1 unless exists $st{$1};
		$st{$1} = $2;
	}
	close $fh;
	fail(1, "$stats is empty or not offsample statistics") unless exists $st{version} || exists $st{ticks};
	# Parameters: the usual ones first, then any other the module has.
	my @pnames = qw(enabled hz key max_stacks max_depth kthreads user_stacks max_user_depth thread_cache cgroup);
	if (opendir(my $dh, $sys)) {
		my %known = map { $_ => 1 } @pnames;
		push @pnames, sort grep { !/^\./ && !$known{$_} && -f "$sys/$_" } readdir $dh;
		closedir $dh;
	}
	my %p;
	for my $n (@pnames) {
		if (open(my $ph, '<', "$sys/$n")) {
			my $v = <$ph> // '';
			chomp $v;
			$p{$n} = $v;
			close $ph;
		}
	}
	my $g = sub { $st{$_[0]} // '-' };
	my $num = sub { my $v = $st{$_[0]}; defined $v && $v =~ /^\d+\z/ ? $v : 0 };
	my $out = '';
	$out .= sprintf("module:      loaded, version %s, stacks format v%s\n", $g->('version'), $g->('format'));
	my @pp = map { "$_=" . ($p{$_} eq '' ? '""' : $p{$_}) } grep { exists $p{$_} } @pnames;
	$out .= 'parameters:  ' . (@pp ? join(' ', @pp) : '(unreadable)') . "\n";
	my $en = $p{enabled} // ($st{enabled} // '') ;
	$out .= sprintf("sampling:    %s\n", $en =~ /^(Y|1)\z/ ? 'on, ' . ($p{hz} // $g->('hz')) . ' Hz' : 'off (enabled=N)');
	if (exists $p{user_stacks}) {
		my $on = $p{user_stacks} =~ /^(Y|1)\z/;
		$out .= sprintf("user stacks: %s", $on ? 'on' : 'off (user_stacks=N)');
		$out .= sprintf(", up to %s frames", $p{max_user_depth}) if $on && exists $p{max_user_depth};
		if (exists $st{user_walks}) {
			$out .= sprintf("; %d walks", $num->('user_walks'));
			# Modules before 0.2 walked after letting the thread go (raced).
			$out .= sprintf(", %d raced", $num->('user_raced')) if exists $st{user_raced};
			$out .= sprintf(", %d cut short (page not in memory)", $num->('user_faulted'))
				if exists $st{user_faulted};
			$out .= sprintf(", %d busy (mmap lock held)", $num->('user_trylock_failed'));
		}
		$out .= "\n";
		# 0.2: .eh_frame tables.
		if (exists $st{cfi_cache_mb}) {
			$out .= $num->('cfi_cache_mb')
				? sprintf("cfi tables:  %d files, %.1f of %d MiB; %d built (%.1f ms), %d failed, %d too big, %d evicted, %d pending; %d frames found with them\n",
					$num->('cfi_tables'), $num->('cfi_bytes') / 1048576, $num->('cfi_cache_mb'),
					$num->('cfi_built'), $num->('cfi_build_ns') / 1e6, $num->('cfi_failed'),
					$num->('cfi_too_big'), $num->('cfi_evicted'), $num->('cfi_builds_pending'),
					$num->('user_cfi_frames'))
				. (exists $st{unwind_errors} && $num->('unwind_errors')
					? sprintf("             %d stacks ended at call-frame information that cannot be followed\n",
						$num->('unwind_errors')) : '')
				: "cfi tables:  off (cfi_cache_mb=0: frame pointers only)\n";
		}
	}
	if (exists $p{cgroup}) {
		$out .= 'cgroup:      ' . ($p{cgroup} eq '' ? 'all (no cgroup filter)'
			: "only $p{cgroup}" . (exists $st{cgroup_skipped}
				? sprintf(' (%d visits of other threads skipped)', $num->('cgroup_skipped')) : '')) . "\n";
	}
	$out .= sprintf("ticks:       %s (overrun %s), tick time avg %.3f ms, max %.3f ms\n",
		$g->('ticks'), $g->('ticks_overrun'), $num->('tick_ns_avg') / 1e6, $num->('tick_ns_max') / 1e6);
	my $samples = $num->('samples');
	$out .= sprintf("samples:     %d since load\n", $samples);
	my @rs;
	for my $k (@order) {
		next unless $k =~ /^samples_(.+)\z/;
		my $r = $1;
		push @rs, $r if $num->($k) > 0;
	}
	@rs = sort { $num->("samples_$b") <=> $num->("samples_$a") || rank($a) <=> rank($b) } @rs;
	for my $r (@rs) {
		$out .= sprintf("  %-14s %12d %8s\n", tag($r) . " $r", $num->("samples_$r"), pct($num->("samples_$r"), $samples));
	}
	$out .= sprintf("dropped:     %d (table full %d, out of memory %d)\n",
		$num->('dropped'), $num->('dropped_table_full'), $num->('dropped_nomem'));
	$out .= sprintf("generation:  %s: %d ticks, %d samples, %d records; drains %d, resets %d\n",
		$g->('generation'), $num->('generation_ticks'), $num->('generation_samples'),
		$num->('records'), $num->('drains'), $num->('resets'));
	$out .= sprintf("stacks:      %d unique, table %d%% full (max_stacks %s)\n",
		$num->('stacks_unique'), $num->('table_fill_pct'), $g->('max_stacks'));
	$out .= sprintf("cpu share:   %.3f%% of one CPU (sampler CPU time %.3f s)\n",
		$num->('cpu_share_ppm') / 1e4, $num->('sampler_cpu_ns') / 1e9);
	my $mem = $num->('memory_bytes');
	$out .= sprintf("memory:      %.1f MiB (%d bytes)\n", $mem / 1048576, $mem);
	# Bounds (0.2): what RAM allows, old generations readers keep alive.
	if (exists $st{max_stacks_limit}) {
		$out .= sprintf("bounds:      max_stacks %s of %d allowed here, thread_cache %s of %d; "
			. "%d of %d old generations held open (%d drains/resets refused)\n",
			$g->('max_stacks'), $num->('max_stacks_limit'), $g->('thread_cache'),
			$num->('thread_cache_limit'), $num->('generations_retired'), $num->('max_retired'),
			$num->('swaps_refused'));
	}
	if (exists $st{open_denied}) {
		$out .= sprintf("access:      %d opens refused (no CAP_SYS_ADMIN, not in group=)\n",
			$num->('open_denied'));
	}
	print $out;
	return 0;
}

# ---------------------------------------------------------------- prune

# prune DIR KEEP MAXAGE_DAYS: snapshot retention.  Only our own file names
# are touched; 0 disables a limit.  Prints the removed files with -v.
sub cmd_prune {
	my @a = @_;
	my %o;
	getopts(\@a, \%o, 'verbose|v', 'protect=s');
	fail(2, "prune: DIR KEEP MAXAGE expected") unless @a == 3;
	my ($dir, $keep, $age) = @a;
	opendir(my $dh, $dir) or fail(1, "cannot read $dir: " . lc "$!");
	# Oldest first: by time stamp, generation, then modification time (a
	# name taken by an earlier drain got a .N suffix).  --protect names
	# the file just written, never removed.
	my @snap = map { $_->[0] }
		sort { $a->[1] cmp $b->[1] || $a->[2] <=> $b->[2] || $a->[4] <=> $b->[4] || $a->[3] <=> $b->[3] }
		map { /^offsample-(\d{8}T\d{6}Z)-g(\d+)(?:\.(\d+))?\.stacks\z/
			? [$_, $1, $2, $3 // 0, (lstat "$dir/$_")[9] // 0] : () }
		readdir $dh;
	closedir $dh;
	my %rm;
	if ($keep > 0) {
		# The protected file is one of the KEEP newest, whatever its rank.
		my $p = $o{protect} // '';
		my $has = grep { $_ eq $p } @snap;
		my @others = grep { $_ ne $p } @snap;
		my $n = $keep - ($has ? 1 : 0);
		$rm{$_} = 1 for @others[0 .. $#others - $n];
	}
	if ($age > 0) {
		for my $f (@snap) {
			my @s = lstat "$dir/$f" or next;
			$rm{$f} = 1 if time - $s[9] > $age * 86400;
		}
	}
	delete $rm{$o{protect}} if defined $o{protect};
	my $err = 0;
	for my $f (sort keys %rm) {
		if (unlink "$dir/$f") {
			print "removed $dir/$f\n" if $o{verbose};
		} elsif (-e "$dir/$f") {
			$err = "cannot remove $dir/$f: " . lc "$!";
		}
	}
	fail(1, $err) if $err;
	return 0;
}

# ---------------------------------------------------------------- header

# hdr NAME FILE: value of one header line of the first generation.
sub cmd_hdr {
	my @a = @_;
	fail(2, "hdr: NAME FILE expected") unless @a == 2;
	open(my $fh, '<', $a[1]) or fail(1, "cannot read $a[1]: " . lc "$!");
	while (<$fh>) {
		last unless /^#/;
		if (/^# \Q$a[0]\E: ?(.*?)\s*$/) { print "$1\n"; return 0; }
	}
	return 1;
}

# check [--force] LABEL FILE ...: a file cut short or damaged (see
# OffsampleStacks' tally) stops the command, naming the file as the user
# did (LABEL) and what is wrong; with --force each problem is a warning
# and the command reads what is there.
sub cmd_check {
	my @a = @_;
	my $force = @a && $a[0] eq '--force' ? shift @a : undef;
	fail(2, "check: LABEL FILE pairs expected") if @a % 2;
	while (my ($label, $file) = splice(@a, 0, 2)) {
		my @p = damage($label, $file);
		next unless @p;
		fail(1, "$p[0] (--force reads what is there)") unless $force;
		print STDERR "$OffsampleStacks::PROG: warning: $_; reading what is there (--force)\n" for @p;
	}
	return 0;
}

my %CMD = (report => \&cmd_report, check => \&cmd_check, top => \&cmd_top, filter => \&cmd_filter,
	title => \&cmd_title, status => \&cmd_status, prune => \&cmd_prune,
	hdr => \&cmd_hdr, needsym => \&cmd_needsym, blockers => \&cmd_blockers,
	waitcrit => \&cmd_waitcrit, jit => \&cmd_jit);
my $c = shift @ARGV // '';
fail(2, "internal: unknown helper command \"$c\"") unless $CMD{$c};
exit $CMD{$c}->(@ARGV);

