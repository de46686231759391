# SPDX-License-Identifier: GPL-2.0
#
# OffsampleBlockers: `offsample blockers`, who holds what threads wait
# for, from the "# blocker:" lines of stacks files (docs/FORMAT.md): one
# line per waiter -> holder edge with the chain followed to its root, or
# merged waiter/holder stacks in folded form for a flame graph.
#
# Perl 5, core modules only.
package OffsampleBlockers;
use strict;
use warnings;
use Exporter 'import';
use OffsampleStacks qw(parse kfunc fail);
use OffsampleText qw(getopts);

our @EXPORT_OK = qw(cmd_blockers);

# Scheduler frames at the leaf of every blocked kernel stack: they say
# nothing about what the thread does.
my $SCHED = qr/^(?:__schedule|schedule|schedule_preempt_disabled|schedule_hrtimeout_range_clock|schedule_hrtimeout_range|schedule_timeout|io_schedule|io_schedule_timeout|preempt_schedule_common|__cond_resched|rt_mutex_schedule|rtlock_slowlock_locked)(?: |\z)/;

sub esc {	# values in name=value output: no spaces, tabs or newlines
	my $s = shift // '-';
	$s =~ s/([\x00-\x20\x7f\\])/sprintf('\\x%02x', ord $1)/ge;
	return $s eq '' ? '-' : $s;
}

sub kframes {	# kernel frames of a record, leaf first, names only
	my ($r, $off) = @_;
	return () if !$r || $r->{kstack} eq '-';
	return map { kfunc($_, $off) } grep { $_ ne '' } split /;/, $r->{kstack};
}
# A user frame as the folded stacks of stackcollapse-offsample name it:
# the function ("func+0xoff (file)" from offsample-symbolize), else the
# file's name and offset, "[anon]" and the like without their address.
sub uname1 {
	my ($f, $off) = @_;
	return "$1+$2" . ($3 // '') if $f =~ m{^/(?:.*/)?([^/]*)\+(0x[0-9a-fA-F]+)( \([^()]*\))?\z}s;
	return $1 . ($off ? $2 : '') if $f =~ /^(.+?)(\+0x[0-9a-fA-F]+) \([^()]*\)\z/s;
	return $1 if !$off && $f =~ /^(\[[a-z]+\])\+0x[0-9a-fA-F]+\z/;
	return $f;
}
sub uframes {	# user frames of a record, leaf first
	my ($r, $off) = @_;
	return () if !$r || $r->{ustack} eq '-';
	return map { uname1($_, $off) } grep { $_ ne '' } split /;/, $r->{ustack};
}

# The first N frames that say what a thread does: user frames (leaf
# first) when it has them, else its kernel frames without the scheduler.
sub top_frames {
	my ($r, $n, $off) = @_;
	my @f = uframes($r, $off);
	@f = grep { $_ !~ $SCHED } kframes($r, $off) unless @f;
	splice @f, $n if @f > $n;
	return @f ? join(';', @f) : '-';
}

# What the holder was doing: its record's reason, or running, gone,
# unsampled, or "sampled" when its record is not in the input.
sub hwhat {
	my ($e, $recs) = @_;
	return $e->{hstate} // '?' unless ($e->{hstate} // '') eq 'sampled';
	my $h = $recs->{$e->{hrec} // '-'};
	# Its record is not in the input (filtered out): sampled, no more.
	return $h ? $h->{reason} : 'sampled';
}

sub cmd_blockers {
	my @args = @_;
	my %o;
	getopts(\@args, \%o, 'folded', 'offsets', 'frames=i');
	shift @args if @args && $args[0] eq '--';
	my $n = $o{frames} // 5;
	fail(2, '--frames needs a number from 1 to 64') if $n < 1 || $n > 64;
	my $d = eval { parse(@args) };
	fail(1, $@ =~ s/\n\z//r) if $@;
	fail(1, 'no offsample stacks in the input') unless @{$d->{gens}};

	# Edges of every generation; records by (generation, id).
	my (@edges, %recs);
	for my $r (@{$d->{recs}}) {
		$recs{$r->{gen}}{$r->{id}} = $r;
	}
	my $lock = 0;
	for my $r (@{$d->{recs}}) {
		$lock += $r->{count} if $r->{reason} eq 'lock';
	}
	for my $g (@{$d->{gens}}) {
		for my $e (@{$g->{edges} // []}) {
			push @edges, { %$e, gen => $g,
				w => $recs{$g}{$e->{wrec} // '-'},
				h => $recs{$g}{$e->{hrec} // '-'} };
		}
	}
	# The module counts edges since 0.3 ("# blockers: N" in the header).
	my $has = grep { defined $_->{blockers} } @{$d->{gens}};
	if ($o{folded}) {
		return folded(\@edges, \%o);
	}

	# Merge the same waiter -> holder pair over generations and records.
	my (%pair, @pairs);
	for my $e (@edges) {
		my $k = join("\t", map { $e->{$_} // '-' } qw(waiter holder kind object));
		my $p = $pair{$k};
		if (!$p) {
			$p = $pair{$k} = { %$e, samples => 0, hwhat => {} };
			push @pairs, $p;
		}
		$p->{samples} += $e->{samples};
		$p->{hwhat}{hwhat($e, $recs{$e->{gen}})} += $e->{samples};
		# The holder's most frequent record stands for it.
		if ($e->{h} && (!$p->{hbest} || $e->{samples} > $p->{hbestn})) {
			@$p{qw(hbest hbestn)} = ($e->{h}, $e->{samples});
		}
		if ($e->{w} && (!$p->{wbest} || $e->{samples} > $p->{wbestn})) {
			@$p{qw(wbest wbestn)} = ($e->{w}, $e->{samples});
		}
	}
	# What a holder waited for while it held others up: the pair of the
	# edges whose waiter record is the holder's record (the same state
	# at the same ticks), the one with the most samples.  A thread's
	# waits in other states (a sleeper queued for a CPU once) are not
	# its waits while it held the lock.
	my (%byrec, %recn);
	for my $e (@edges) {
		my $w = $e->{w} or next;
		next if $recn{$w} && $recn{$w} >= $e->{samples};
		my $k = join("\t", map { $e->{$_} // '-' } qw(waiter holder kind object));
		($byrec{$w}, $recn{$w}) = ($pair{$k}, $e->{samples});
	}
	my ($total, $known) = (0, 0);
	for my $e (@edges) {
		$total += $e->{samples};
		$known += $e->{samples} if $e->{w} && $e->{w}{reason} eq 'lock';
	}
	printf "# offsample blockers: %d waiter -> holder pair%s, %d waiter samples with a known holder%s\n",
		scalar @pairs, @pairs == 1 ? '' : 's', $total,
		$lock ? " (lock samples in the input: $lock, with a known holder: $known)" : '';
	print "# fields: samples, the waiter (thread id, process, thread name, reason, lock kind and address),\n";
	print "#   the holder (thread id, thread name, what it did at the same ticks: a reason, running, gone or\n";
	print "#   unsampled), chain: waiter>holder>... to the root holder (\">cycle\": a deadlock), and the\n";
	print "#   root holder's reason and top frames (user frames leaf first, else kernel frames)\n";
	if (!@pairs) {
		print $has
			? "\nNo waiter -> holder edges in the input.\n"
			: "\nNo waiter -> holder edges in the input (recorded with blockers=0, or by a module before 0.3).\n";
		return 0;
	}
	for my $p (sort { $b->{samples} <=> $a->{samples} ||
			  ($a->{waiter} // 0) <=> ($b->{waiter} // 0) } @pairs) {
		my $hw = (sort { $p->{hwhat}{$b} <=> $p->{hwhat}{$a} || $a cmp $b } keys %{$p->{hwhat}})[0];
		# Follow the holder's own waits to the root.
		my @chain = ($p->{waiter} // '-', $p->{holder} // '-');
		my %seen = map { $_ => 1 } @chain;
		my ($root, $cycle) = ($p, 0);
		while (my $q = $root->{hbest} && $byrec{$root->{hbest}}) {
			$root = $q;
			my $h = $q->{holder} // '-';
			if ($seen{$h}++) {
				$cycle = 1;
				push @chain, $h;
				last;
			}
			push @chain, $h;
		}
		my $rw = (sort { $root->{hwhat}{$b} <=> $root->{hwhat}{$a} || $a cmp $b } keys %{$root->{hwhat}})[0];
		my $wr = $p->{wbest};
		print join(' ',
			"samples=$p->{samples}",
			'waiter=' . esc($p->{waiter}), 'wcomm=' . esc($wr ? $wr->{comm} : undef),
			'wname=' . esc($p->{wname}), 'reason=' . esc($wr ? $wr->{reason} : undef),
			'kind=' . esc($p->{kind}), 'object=' . esc($p->{object}),
			'holder=' . esc($p->{holder}), 'hname=' . esc($p->{hname}),
			'hwhat=' . esc($hw),
			'chain=' . join('>', map { esc($_) } @chain) . ($cycle ? '>cycle' : ''),
			'root=' . esc($root->{holder}), 'rname=' . esc($root->{hname}),
			'rwhat=' . esc($rw),
			'rframes=' . esc(top_frames($root->{hbest}, $n, $o{offsets}))), "\n";
	}
	return 0;
}

# Folded stacks for a flame graph, as offwaketime merges stacks: the
# waiter's process, user and kernel frames root first, a "--" frame, then
# the holder's kernel and user frames leaf first and its thread name (or
# "[running]", "[gone]", "[unsampled]" when its stack is unknown), the
# holder's frames marked "_[w]" (the chain palette draws them apart).
sub folded {
	my ($edges, $o) = @_;
	my %sum;
	for my $e (@$edges) {
		my $w = $e->{w} or next;
		my @f = ($w->{comm});
		push @f, reverse(uframes($w, $o->{offsets}));
		push @f, reverse(kframes($w, $o->{offsets}));
		push @f, '--';
		my $hs = $e->{hstate} // '?';
		if ($hs eq 'sampled' && $e->{h}) {
			push @f, map { "${_}_[w]" } kframes($e->{h}, $o->{offsets}),
				uframes($e->{h}, $o->{offsets});
		} else {
			push @f, "[$hs]_[w]";
		}
		push @f, "$e->{hname}_[w]" if ($e->{hname} // '-') ne '-';
		my $line = join(';', map { s/;/\\x3b/gr =~ s/\s+\z//r } @f);
		$sum{$line} += $e->{samples};
	}
	print "$_ $sum{$_}\n" for sort keys %sum;
	return 0;
}

1;
