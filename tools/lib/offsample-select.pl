#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
#
# offsample-select.pl - the record filters of the offsample reading
# commands (report, collapse, flamegraph, pprof, diff): reads offsample
# stacks files (several generations, concatenated, format v1 or v2) and
# writes the same format with only the records that match, so that every
# command after it works unchanged.  Not a user command: `offsample` runs
# it (see offsample(8), FILTERS).
#
#   offsample-select.pl [FILTERS] -o OUT -- FILE...
#
# FILTERS (each LIST is comma-separated, the option may be repeated; a
# record must match every filter given):
#   --reason LIST          wait reason is one of LIST
#   --exclude-reason LIST  wait reason is none of LIST
#   --comm LIST            process name is one of LIST (exact)
#   --pid LIST, --tid LIST process / thread id is one of LIST
#   --cgroup PATH          cgroup v2 path is PATH or below it
#   --state LIST           scheduler state letter is one of LIST
#   --user-only            keep user frames only (kernel stack dropped)
#   --kernel-only          keep kernel frames only (user stack dropped)
#   --hide-idle            leave out the records of reason idle (idle kernel
#                          threads: report's and flamegraph's default) and
#                          count their samples in a "# hidden-idle:" line;
#                          exit 3, writing nothing, when nothing else
#                          matched (the caller then shows them after all)
#
# In the output, each generation's "# samples:" and "# records:" lines are
# recomputed, and "# filter:" and "# unfiltered-samples:" lines are added
# before "# columns:" (docs/FORMAT.md).  Exit 0 when at least one record
# matched; 1 when none did or an input cannot be used (one line on
# stderr); 2 for a bad filter value.  Perl 5, core modules only.
use strict;
use warnings;
use Getopt::Long qw(GetOptionsFromArray :config no_ignore_case no_auto_abbrev);
use FindBin;
use lib $FindBin::RealBin;
use OffsampleStacks qw(renumber_edge @V1 fail fail_on_die open_input line_kind column_index);

fail_on_die($ENV{OFFSAMPLE_PROG} || 'offsample');

# usage(MESSAGE): a bad filter value, exit 2, as the CLI's usage errors.
sub usage {
	fail(2, "$_[0] (see $OffsampleStacks::PROG --help)");
}
$SIG{__WARN__} = sub { };

my @REASONS = qw(io lock sched sleep net ipc fault stopped idle other cpu);
my @STATES = qw(R S D I P T t F);

my %o = (reason => [], 'exclude-reason' => [], comm => [], pid => [],
	 tid => [], state => [], cgroup => undef);
{
	my @errs;
	local $SIG{__WARN__} = sub { push @errs, $_[0] };
	GetOptionsFromArray(\@ARGV, \%o, 'reason=s@', 'exclude-reason=s@',
		'comm=s@', 'pid=s@', 'tid=s@', 'state=s@', 'cgroup=s',
		'user-only', 'kernel-only', 'hide-idle', 'o=s', 'label=s@', 'check') or do {
		my $e = $errs[0] // "invalid option\n";
		$e =~ s/\n.*//s;
		usage(lcfirst $e);
	};
}
my @files = @ARGV ? @ARGV : ('-');
my @labels = @{$o{label} // []};

# list(NAME): the values of a list option, split at commas, empty dropped.
sub list {
	my ($n) = @_;
	return grep { $_ ne '' } map { split /,/, $_, -1 } @{$o{$n}};
}
# The format's escape of comm/cgroup fields (docs/FORMAT.md), so that a
# name given on the command line compares with the field as written.
sub esc {
	my ($s) = @_;
	$s =~ s/([\x00-\x1f\x7f\\;])/sprintf('\\x%02x', ord $1)/ge;
	return $s;
}

my %want;	# filter name -> { value => 1 }
my @desc;	# for the "# filter:" header line
for my $n (qw(reason exclude-reason)) {
	my @v = list($n);
	next unless @{$o{$n}};
	usage("--$n needs a reason list") unless @v;
	for my $v (@v) {
		usage("--$n: unknown reason \"$v\" (reasons: @REASONS)")
			unless grep { $_ eq $v } @REASONS;
	}
	$want{$n} = { map { $_ => 1 } @v };
	push @desc, "$n=" . join(',', @v);
}
for my $n (qw(pid tid)) {
	next unless @{$o{$n}};
	my @v = list($n);
	usage("--$n needs a list of ids") unless @v;
	for my $v (@v) {
		usage("--$n needs numeric ids, not \"$v\"") unless $v =~ /^[0-9]{1,10}\z/;
	}
	$want{$n} = { map { ($_ + 0) => 1 } @v };
	push @desc, "$n=" . join(',', @v);
}
if (@{$o{comm}}) {
	my @v = list('comm');
	usage("--comm needs a process name") unless @v;
	$want{comm} = { map { esc($_) => 1 } @v };
	push @desc, 'comm=' . join(',', map { esc($_) } @v);
}
if (@{$o{state}}) {
	my @v = list('state');
	usage("--state needs a list of state letters") unless @v;
	for my $v (@v) {
		usage("--state: unknown state \"$v\" (states: @STATES)")
			unless grep { $_ eq $v } @STATES;
	}
	$want{state} = { map { $_ => 1 } @v };
	push @desc, 'state=' . join(',', @v);
}
my $cg;
if (defined $o{cgroup}) {
	$cg = $o{cgroup};
	$cg =~ s{^/sys/fs/cgroup(?=/|\z)}{};
	$cg = "/$cg" unless $cg =~ m{^/};
	$cg =~ s{/+\z}{};
	$cg = esc($cg);
	push @desc, 'cgroup=' . ($cg eq '' ? '/' : $cg);
}
usage("--kernel-only and --user-only exclude each other")
	if $o{'kernel-only'} && $o{'user-only'};
push @desc, 'user-only' if $o{'user-only'};
push @desc, 'kernel-only' if $o{'kernel-only'};
exit 0 if $o{check};	# the values are valid
fail(2, "internal: -o OUT expected") unless defined $o{o};

# The data must have what a filter looks at: a key without pids writes
# "-", which no id matches; say so instead of printing nothing.
sub need_column {
	my ($what, $name, $col, $g) = @_;
	return if defined $col->{$name};
	fail(1, "$what needs a $name column, but $g->{file} has none (stacks format v$g->{format})");
}

my (@gens, $g, %col, $fi);
my $matched = 0;
my $nrecs = 0;
my $hidden = 0;	# samples --hide-idle left out
my $bad = 0;	# malformed record lines
for my $file (@files) {
	my $fh = open_input($file);
	my $name = $labels[$fi++ // 0] // ($file eq '-' ? 'standard input' : $file);
	undef $g;
REC:	while (my $line = <$fh>) {
		my ($kind, @v) = line_kind($line);
		if ($kind eq 'gen') {
			# lines: header and kept records in their order ("# file:"
			# lines come between records).
			$g = { file => $name, format => $v[0], lines => [$line], nrec => 0,
			       all => 0 };
			push @gens, $g;
			%col = %{column_index(@V1)};
			next;
		}
		next unless $g;		# before any header: not ours, dropped
		if ($kind eq 'edge') {
			# An edge names records by id (their position): renumber,
			# and keep it only if its waiter's record was kept.
			my $e = renumber_edge($line, $g->{newid} // {});
			if (defined $e) {
				push @{$g->{lines}}, $e;
				$g->{nedge}++;
			}
			next;
		}
		if ($kind ne 'record' && $kind ne 'blank') {
			%col = %{column_index(@{$v[0]})} if $kind eq 'columns';
			push @{$g->{lines}}, $line;
			next;
		}
		(my $l = $line) =~ s/\r?\n\z//;
		next if $l eq '';
		my @f = split /\t/, $l, -1;
		# A malformed line is dropped and counted, as the readers do:
		# they do not see it after this.
		if (!OffsampleStacks::record_ok(\@f, \%col)) {
			$bad++;
			next;
		}
		my $c = $f[$col{count}];
		$nrecs++;
		my $oldid = ++$g->{oldid};
		$g->{all} += $c;
		my $v = sub { my $i = $col{$_[0]}; defined $i && $i < @f ? $f[$i] : '-' };
		next if $want{reason} && !$want{reason}{$v->('reason')};
		next if $want{'exclude-reason'} && $want{'exclude-reason'}{$v->('reason')};
		next if $want{state} && !$want{state}{$v->('state')};
		next if $want{comm} && !$want{comm}{$v->('comm')};
		for my $n (qw(pid tid)) {
			next unless $want{$n};
			need_column("--$n", $n, \%col, $g);
			my $id = $v->($n);
			if ($id eq '-') {
				my $k = $g->{key} // '';
				for (@{$g->{lines}}) { $k = $1 if /^# key:\s*(\S*)/; }
				fail(1, "--$n needs ${n}s in the data, but $name was recorded with key=$k"
					. " (record with key=" . ($n eq 'pid' ? 'pid' : 'tid') . ")");
			}
			next REC unless $want{$n}{$id};
		}
		if (defined $cg) {
			need_column('--cgroup', 'cgroup', \%col, $g);
			my $p = $v->('cgroup');
			next REC unless $cg eq '' || $p eq $cg || index($p, "$cg/") == 0;
		}
		if ($o{'hide-idle'} && $v->('reason') eq 'idle') {
			$g->{hidden} += $c;
			$hidden += $c;
			next;
		}
		if ($o{'user-only'} || $o{'kernel-only'}) {
			my $drop = $o{'user-only'} ? 'kstack' : 'ustack';
			my $i = $col{$drop};
			$f[$i] = '-' if defined $i && $i < @f;
			$l = join("\t", @f);
		}
		push @{$g->{lines}}, "$l\n";
		$g->{nrec}++;
		$g->{newid}{$oldid} = $g->{nrec};
		$g->{matched} += $c;
		$matched++;
	}
	close $fh if $file ne '-';
}

fail(1, "no offsample stacks in the input") unless @gens;
print STDERR "$OffsampleStacks::PROG: skipped $bad malformed lines\n" if $bad;
exit 3 if !$matched && $hidden;	# idle threads alone: the caller shows them
if (!$matched) {
	fail(1, $nrecs ? "no stack matches the filters (" . join(' ', @desc) . ")"
		       : "no samples in the input");
}

my $out;
if ($o{o} eq '-') {
	$out = \*STDOUT;
} else {
	open($out, '>', $o{o}) or fail(1, "cannot write $o{o}: " . lc "$!");
}
my $desc = join(' ', @desc);
for my $g (@gens) {
	my @h = @{$g->{lines}};
	my $n = $g->{nrec};
	my $s = $g->{matched} // 0;
	my $had = grep { /^# unfiltered-samples:/ } @h;
	for (@h) {
		s/^# samples: .*/# samples: $s/;
		s/^# records: .*/# records: $n/;
		s/^# blockers: .*/# blockers: @{[$g->{nedge} \/\/ 0]}/;
	}
	my @add;
	if ($desc ne '') {
		push @add, "# filter: $desc\n";
		push @add, "# unfiltered-samples: $g->{all}\n" unless $had;
	}
	push @add, "# hidden-idle: $g->{hidden}\n" if $g->{hidden};
	if (@add) {
		my $at = @h;
		for my $i (1 .. $#h) {
			if ($h[$i] =~ /^# columns:/) { $at = $i; last; }
			if ($h[$i] !~ /^#/) { $at = $i; last; }
		}
		splice @h, $at, 0, @add;
	}
	print $out @h or fail(1, "write error: " . lc "$!");
}
close $out or fail(1, "write error: " . lc "$!");
exit 0;
