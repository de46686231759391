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
use OffsampleStacks qw(parse kfunc fail open_input line_kind column_index record_ok @V1);
use OffsampleText qw(getopts);

our @EXPORT_OK = qw(cmd_blockers cmd_waitcrit wait_weights);

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
# unsampled, or "sampled" when its record is not in the input; for a wait
# that names none (format v5), "unknown:" and why.
sub hwhat {
	my ($e, $recs) = @_;
	return 'unknown:' . ($e->{why} // '?') if ($e->{hstate} // '') eq 'unknown';
	return $e->{hstate} // '?' unless ($e->{hstate} // '') eq 'sampled';
	my $h = $recs->{$e->{hrec} // '-'};
	# Its record is not in the input (filtered out): sampled, no more.
	return $h ? $h->{reason} : 'sampled';
}

sub cmd_blockers {
	my @args = @_;
	my %o;
	getopts(\@args, \%o, 'folded', 'offsets', 'frames=i', 'dot', 'max-edges=i', 'title=s');
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
	fail(2, '--folded and --dot exclude each other') if $o{folded} && $o{dot};
	if ($o{folded}) {
		return folded(\@edges, \%o);
	}
	if ($o{dot}) {
		return dot(\@edges, \%recs, \%o);
	}

	# Merge the same waiter -> holder pair over generations and records.
	my (%pair, @pairs);
	for my $e (@edges) {
		my $k = join("\t", map { $e->{$_} // '-' } qw(waiter holder kind object why));
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
		my $k = join("\t", map { $e->{$_} // '-' } qw(waiter holder kind object why));
		($byrec{$w}, $recn{$w}) = ($pair{$k}, $e->{samples});
	}
	my ($total, $known, $none) = (0, 0, 0);
	for my $e (@edges) {
		if (($e->{hstate} // '') eq 'unknown') {
			$none += $e->{samples};
			next;
		}
		$total += $e->{samples};
		$known += $e->{samples} if $e->{w} && $e->{w}{reason} eq 'lock';
	}
	printf "# offsample blockers: %d waiter -> holder pair%s, %d waiter samples with a known holder%s%s\n",
		scalar @pairs, @pairs == 1 ? '' : 's', $total,
		$none ? ", $none with none named (holder=?)" : '',
		$lock ? " (lock samples in the input: $lock, with a known holder: $known)" : '';
	print "# fields: samples, the waiter (thread id, process, thread name, reason, lock kind and address),\n";
	print "#   the holder (thread id, thread name, what it did at the same ticks: a reason, running, gone,\n";
	print "#   unsampled; ? and unknown:WHY when none is named), chain: waiter>holder>... to the root holder\n";
	print "#   (\">cycle\": a deadlock), and the root holder's reason and top frames (user leaf first, else kernel)\n";
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

# ------------------------------------------------------------ waits caused
#
# wait_weights(PARSED) -> { RECORD => WEIGHT }: the waiting each record's
# code caused, in waiter samples (docs/TOOLS.md, "offsample critical").
# Every edge W -> H (m samples: m ticks at which W's thread waited while
# H's thread held it up) puts m on the holder's record H, scaled down
# when W's edges have more samples than W has (a wait for any of k
# children has an edge to each: they share its samples).  Weight that
# arrives at a record X moves on along X's own edges: X's count is n
# samples, its edges to holders H1, H2 ... have m1, m2 ... samples;
# H_i gets the share m_i / max(n, m1 + m2 + ...) of it, and the rest
# stays with X (the ticks X ran, or waited for nobody known).  A holder
# that waits all the time thus passes everything on to the root of the
# chain; one that waits for any of k children splits it k ways.  Weight
# that comes back to a record on its own path (a cycle: a deadlock)
# stays where the cycle closes; chains longer than 16 stop there.  Weight
# never moves on along a run-queue wait (kind cpu): a lock holder that was
# preempted keeps its waiters' samples on its own code (the thread
# running on its CPU gets the holder's own run-queue samples, as any
# thread queued behind it gives).  Weight is kept only on records of threads that run or work: reasons
# cpu, sched, io and fault.  Weight that ends on a thread waiting for
# something outside the host or the graph (a timer, the network, a
# terminal, a lock with no known holder, a deadlock) is no code's to
# speed up: offsample blockers shows those chains.
my %ACTIVE = map { $_ => 1 } qw(cpu sched io fault);

sub wait_weights {
	my ($d) = @_;
	my (%w, %recs, %out);
	$recs{$_->{gen}}{$_->{id}} = $_ for @{$d->{recs}};
	for my $g (@{$d->{gens}}) {
		for my $e (@{$g->{edges} // []}) {
			my $wr = $recs{$g}{$e->{wrec} // '-'} or next;
			my $hr = $recs{$g}{$e->{hrec} // '-'};
			push @{$out{$wr}}, [$hr, $e->{samples}, $e->{kind} // '?'];
		}
	}
	my %den;
	for my $r (keys %out) {
		my $m = 0;
		$m += $_->[1] for @{$out{$r}};
		$den{$r} = $m;
	}
	my $give;
	$give = sub {
		my ($r, $x, $path, $depth) = @_;
		my $edges = $out{$r};
		if (!$edges || $depth >= 16) {
			$w{$r} += $x;
			return;
		}
		my $n = $r->{count} > $den{$r} ? $r->{count} : $den{$r};
		my $left = $x;
		local $path->{$r} = 1;
		for my $e (@$edges) {
			my ($h, $m, $kind) = @$e;
			my $part = $x * $m / $n;
			next unless $h;	# no record: it stays here
			# A holder queued for a CPU keeps what it received: its
			# code is what its waiters wait for (the thread on that
			# CPU gets the holder's own run-queue samples).
			next if $kind eq 'cpu';
			$left -= $part;
			if ($path->{$h}) {
				$w{$h} += $part;	# a cycle closes
			} else {
				$give->($h, $part, $path, $depth + 1);
			}
		}
		$w{$r} += $left;
	};
	for my $g (@{$d->{gens}}) {
		for my $e (@{$g->{edges} // []}) {
			my $wr = $recs{$g}{$e->{wrec} // '-'} or next;
			my $hr = $recs{$g}{$e->{hrec} // '-'} or next;
			my $n = $wr->{count} > $den{$wr} ? $wr->{count} : $den{$wr};
			$give->($hr, $e->{samples} * $wr->{count} / $n, { $wr => 1 }, 0);
		}
	}
	undef $give;
	delete $w{$_} for grep { !$ACTIVE{$_->{reason}} } @{$d->{recs}};
	return \%w;
}

# waitcrit --by waits|both FILE: FILE with each record's critical column
# replaced by the waiting its code caused (waits), or that plus its GAPP
# weight (both), for `offsample critical --by`.
sub cmd_waitcrit {
	my @args = @_;
	my %o;
	getopts(\@args, \%o, 'by=s');
	my $by = $o{by} // 'both';
	fail(2, "--by: waits or both, not $by") unless $by =~ /^(?:waits|both)\z/;
	fail(2, 'waitcrit needs one file') unless @args == 1;
	my $file = $args[0];
	my $d = eval { parse($file) };
	fail(1, $@ =~ s/\n\z//r) if $@;
	my $w = wait_weights($d);
	my %byid;
	$byid{$_->{gen}}{$_->{id}} = $w->{$_} // 0 for @{$d->{recs}};
	my $fh = open_input($file);
	my %col = %{column_index(@V1)};
	my ($gi, $id) = (-1, 0);
	while (my $line = <$fh>) {
		my ($kind, @v) = line_kind($line);
		if ($kind eq 'gen') {
			($gi, $id) = ($gi + 1, 0);
			%col = %{column_index(@V1)};
		} elsif ($kind eq 'columns') {
			%col = %{column_index(@{$v[0]})};
		} elsif ($kind eq 'record' && $gi >= 0) {
			(my $l = $line) =~ s/\r?\n\z//;
			my @f = split /\t/, $l, -1;
			if (record_ok(\@f, \%col) && defined $col{critical} && $col{critical} < @f) {
				my $x = $byid{$d->{gens}[$gi]}{++$id} // 0;
				my $c = $f[$col{critical}];
				$x += $c if $by eq 'both' && $c =~ /^[0-9.]+\z/;
				$f[$col{critical}] = sprintf('%.3f', $x);
				$line = join("\t", @f) . "\n";
			} elsif (record_ok(\@f, \%col)) {
				++$id;
			}
		}
		print $line or fail(1, 'write error: ' . lc "$!");
	}
	close STDOUT or fail(1, 'write error: ' . lc "$!");
	return 0;
}

# ------------------------------------------------------------ the picture
#
# dot(EDGES, RECS, OPTIONS): the wait-for graph in Graphviz's language.
# Threads are nodes, inside a box per process; an edge waiter -> holder
# per pair and kind, labelled with its kind and weight in thread-seconds
# (samples / hz of their generation), its width growing with the weight;
# the heaviest max-edges (default 60) pairs are drawn.  A node says what
# its thread mostly did in the input (a reason, from its records);
# threads on a cycle of waits (a deadlock; run-queue waits are not part
# of one) and the edges between them are red.
my %KCOLOR = (mutex => '#1f4e79', robust => '#1f4e79', pi => '#1f4e79', rwlock => '#1f4e79',
	      gil => '#2e86c1', child => '#27ae60', cpu => '#e67e22', rwsem => '#8e44ad',
	      rtmutex => '#8e44ad', kmutex => '#8e44ad', unix => '#16a085', flock => '#7d6608', posix => '#7d6608',
	      ofd => '#7d6608', pipe => '#16a085', fifo => '#16a085', tcp => '#117a65', udp => '#117a65');

sub dq {	# a DOT string: quotes and backslashes escaped
	my $s = shift // '-';
	$s =~ s/([\\"])/\\$1/g;
	$s =~ s/\n/\\n/g;	# a line break in a label
	$s =~ s/[\x00-\x1f\x7f]/?/g;
	return qq("$s");
}

sub dot {
	my ($edges, $recs, $o) = @_;
	my $max = $o->{'max-edges'} // 60;
	fail(2, '--max-edges needs a number from 1 to 10000') if $max < 1 || $max > 10000;
	my (%pair, @pairs, %thr);
	for my $e (@$edges) {
		my ($w, $h) = ($e->{waiter} // '-', $e->{holder} // '-');
		# A wait that names no holder (holder=?) has no arrow.
		next if $w eq '-' || ($e->{hstate} // '') eq 'unknown';
		my $hz = $e->{gen}{hz} && $e->{gen}{hz} =~ /^\d+\z/ && $e->{gen}{hz} > 0 ? $e->{gen}{hz} : 1;
		my $k = join("\t", $w, $h, $e->{kind} // '?');
		my $p = $pair{$k} //= do {
			push @pairs, { w => $w, h => $h, kind => $e->{kind} // '?', secs => 0, samples => 0 };
			$pairs[-1];
		};
		$p->{secs} += $e->{samples} / $hz;
		$p->{samples} += $e->{samples};
		my $wr = $e->{w};
		$thr{$w} //= { pid => $e->{wpid} // '-', name => $e->{wname},
			       comm => $wr ? $wr->{comm} : undef };
		$thr{$h} //= { pid => $e->{hpid} // '-', comm => $e->{hcomm},
			       name => ($e->{hstate} // '') eq 'gone' ? '[gone]' : $e->{hname} };
	}
	@pairs = (sort { $b->{secs} <=> $a->{secs} || $a->{w} cmp $b->{w} || $a->{h} cmp $b->{h} } @pairs);
	my $cut = @pairs > $max ? @pairs - $max : 0;
	splice @pairs, $max if $cut;
	# What each thread mostly did: its records' reasons, by samples.
	my %what;
	for my $g (values %$recs) {
		for my $r (values %$g) {
			next if !defined $r->{tid} || !$thr{$r->{tid}};
			$what{$r->{tid}}{$r->{reason}} += $r->{count};
		}
	}
	# Cycles among the drawn edges: a thread that reaches itself.  Not
	# through run-queue waits: threads take turns on a CPU, tick after
	# tick, and that is no deadlock.
	my %next;
	push @{$next{$_->{w}}}, $_->{h} for grep { $_->{kind} ne 'cpu' } @pairs;
	my %oncycle;
	for my $start (keys %next) {
		my %seen;
		my @todo = @{$next{$start}};
		while (defined(my $t = shift @todo)) {
			if ($t eq $start) { $oncycle{$start} = 1; last; }
			next if $seen{$t}++;
			push @todo, @{$next{$t} // []};
		}
	}
	my %used;
	$used{$_->{w}} = $used{$_->{h}} = 1 for @pairs;
	my %byproc;
	for my $t (sort { $a <=> $b || $a cmp $b } grep { /^\d+\z/ } keys %used) {
		push @{$byproc{$thr{$t}{pid}}}, $t;
	}
	my @odd = sort grep { !/^\d+\z/ } keys %used;
	my $title = $o->{title} // 'offsample wait-for graph';
	print "digraph offsample_waits {\n";
	print "\tgraph [label=", dq($title . ($cut ? " (the $max heaviest of " . ($max + $cut) . ' pairs)' : '')),
		", labelloc=t, fontname=\"Helvetica\", rankdir=LR];\n";
	print "\tnode [shape=box, style=\"rounded,filled\", fillcolor=\"#f4f6f7\", fontname=\"Helvetica\", fontsize=10];\n";
	print "\tedge [fontname=\"Helvetica\", fontsize=9];\n";
	my $node = sub {
		my ($t, $in) = @_;
		my $i = $thr{$t};
		my $wh = $what{$t} ? (sort { $what{$t}{$b} <=> $what{$t}{$a} || $a cmp $b } keys %{$what{$t}})[0] : undef;
		my $label = join("\n", grep { defined } ($i->{name} // '-') . " ($t)", $wh);
		my @attr = ('label=' . dq($label), 'id=' . dq("t$t"));
		push @attr, 'color="#c0392b"', 'penwidth=2' if $oncycle{$t};
		push @attr, 'fillcolor="#fdebd0"' if ($wh // '') eq 'cpu';
		print "$in\t", dq("t$t"), ' [', join(', ', @attr), "];\n";
	};
	for my $pid (sort { ($a =~ /^\d+\z/ ? $a : 0) <=> ($b =~ /^\d+\z/ ? $b : 0) || $a cmp $b } keys %byproc) {
		my @t = @{$byproc{$pid}};
		my $comm = $thr{$t[0]}{comm} // (grep { defined } map { $thr{$_}{comm} } @t)[0] // '-';
		if ($pid eq '-') {
			$node->($_, '') for @t;
			next;
		}
		print "\tsubgraph ", dq("cluster_p$pid"), " {\n";
		print "\t\tlabel=", dq("$comm ($pid)"), "; id=", dq("p$pid"), "; style=rounded; color=\"#7f8c8d\";\n";
		$node->($_, "\t") for @t;
		print "\t}\n";
	}
	$node->($_, '') for @odd;
	my $top = @pairs ? $pairs[0]{secs} : 1;
	$top ||= 1;
	for my $p (@pairs) {
		my $cyc = $p->{kind} ne 'cpu' && $oncycle{$p->{w}} && $oncycle{$p->{h}};
		my $c = $cyc ? '#c0392b' : $KCOLOR{$p->{kind}} // '#555555';
		my $pw = sprintf('%.1f', 1 + 4 * $p->{secs} / $top);
		printf "\t%s -> %s [label=%s, color=%s, fontcolor=%s, penwidth=%s, id=%s];\n",
			dq("t$p->{w}"), dq("t$p->{h}"),
			dq(sprintf('%s %.2f s', $p->{kind}, $p->{secs})), dq($c), dq($c), $pw,
			dq("e$p->{w}_$p->{h}_$p->{kind}");
	}
	print "}\n";
	return 0;
}

# Folded stacks for a flame graph, as offwaketime merges stacks: the
# waiter's process, user and kernel frames root first, a "[waits for
# KIND]" frame (KIND: the edge's kind, mutex, child, cpu ...), then
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
		push @f, '[waits for ' . ($e->{kind} // '?') . ']';
		my $hs = $e->{hstate} // '?';
		$hs .= ': ' . ($e->{why} // '?') if $hs eq 'unknown';
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
