# SPDX-License-Identifier: GPL-2.0
#
# OffsampleStacks - the reader of the offsample stacks format (formats v1
# to v3, docs/FORMAT.md), and the errors and version of every tool: the
# one place that knows the format's lines.  Used by the tools in this
# directory (offsample-lib.pl, offsample-pprof.pl, offsample-select.pl)
# and by the stand-alone ones (stackcollapse-offsample,
# offsample-symbolize), which find it next to them (tools/lib) or in an
# installed tree (PREFIX/share/offsample/lib).  Not a user command.
#
# Errors are die()d as one line ending in "\n"; the callers turn them
# into their own messages.  Perl 5, core modules only.
package OffsampleStacks;

use strict;
use warnings;
use Exporter qw(import);

our @EXPORT_OK = qw(parse kfunc ufunc frames renumber_edge @V1 fail fail_on_die
	version open_input line_kind column_index record_ok
	tally_new tally_line tally_end damage);

# ---------------------------------------------------------------- errors

# The name in messages ("offsample report"), set by fail_on_die().
our $PROG = 'offsample';

# fail(STATUS, MESSAGE): one line on stderr with the program's name, exit.
sub fail {
	my ($status, $msg) = @_;
	$msg =~ s/\s+\z//;
	$msg =~ s/\n/ /g;
	print STDERR "$PROG: $msg\n";
	exit $status;
}

# fail_on_die(NAME): messages say NAME; a die() outside eval becomes
# fail(1, its message without the Perl location).
sub fail_on_die {
	($PROG) = @_;
	$SIG{__DIE__} = sub {
		return if $^S;
		my $m = shift;
		$m =~ s/ at \S+ line \d+\.?\n?\z//;
		fail(1, $m);
	};
}

# version(): the version installation wrote into a tool that carries this
# reader inline (packaging/inline-reader.pl), else the VERSION file of the
# checkout (tools/lib/../../VERSION) or of the installed tree
# (share/offsample/lib/../VERSION), else "unknown".
our $VERSION_INLINE;
sub version {
	return $VERSION_INLINE if defined $VERSION_INLINE;
	(my $dir = __FILE__) =~ s{/[^/]*\z}{};
	$dir = '.' if $dir eq __FILE__;
	for my $f ("$dir/../../VERSION", "$dir/../VERSION") {
		open(my $fh, '<', $f) or next;
		my $v = <$fh> // '';
		chomp $v;
		return $v if $v ne '';
	}
	return 'unknown';
}

# ---------------------------------------------------------------- lines

our @V1 = qw(count reason state pid tid comm tname kstack);

# open_input(FILE): a read handle on FILE ("-": standard input); dies
# with "cannot read FILE: why" or "FILE: is a directory".
sub open_input {
	my ($file) = @_;
	return \*STDIN if $file eq '-';
	die "$file: is a directory\n" if -d $file;
	open(my $fh, '<', $file) or die 'cannot read ' . $file . ': ' . lc("$!") . "\n";
	return $fh;
}

# line_kind(LINE): what a line of a stacks file is (a trailing newline
# is allowed), as (KIND, VALUES...):
#   ('gen', FORMAT)            "# offsample stacks vN": a generation starts
#   ('columns', [NAMES], RAW)  "# columns: count reason ...": the layout
#   ('edge', FIELDS)           "# blocker: wrec=1<TAB>...": a waiter->holder edge
#   ('header', NAME, VALUE)    "# name: value"
#   ('comment')                any other "#" line
#   ('blank')                  an empty line
#   ('record')                 anything else: TAB-separated fields
sub line_kind {
	my ($line) = @_;
	return ('blank') if $line =~ /^\r?\n?\z/;
	return ('record') if substr($line, 0, 1) ne '#';
	return ('gen', $1) if $line =~ /^# offsample stacks v(\d+)/;
	return ('edge', $1) if $line =~ /^# blocker: (.*?)\r?\n?\z/s;
	return ('columns', [split ' ', $1], $1) if $line =~ /^# columns:\s*(.*?)\s*\z/s;
	return ('header', $1, $2) if $line =~ /^# ([A-Za-z0-9_-]+):\s?(.*?)\s*\z/s;
	return ('comment');
}

# record_ok(\@FIELDS, \%COL): a record line's fields (split on TABs)
# are a record: a count, a reason and a kernel stack field where COL
# says they are.  What parse() keeps and a tally counts.
sub record_ok {
	my ($f, $col) = @_;
	my ($ci, $ri, $ki) = @{$col}{qw(count reason kstack)};
	return defined $ci && defined $ri && defined $ki
	    && @$f > $ki && @$f > $ci && @$f > $ri
	    && $f->[$ci] =~ /^\d+\z/ && $f->[$ri] =~ /^[^\s;]+\z/;
}

# column_index(NAMES): { name => index } (the first of a repeated name);
# column_index(@V1) before a "# columns:" line.
sub column_index {
	my %col;
	for my $i (0 .. $#_) {
		$col{$_[$i]} //= $i;
	}
	return \%col;
}

# ---------------------------------------------------------------- damage

# A file cut short (a copy interrupted, a disk full) or damaged still
# parses: its generations' headers say how much they hold.  A tally
# follows a file line by line and, at the end of each generation, holds
# what was read against the header's samples, records and blockers.  A
# drain's header is exact; the live stacks file (source: stacks) may
# hold more than its header (the sampler counted on while it was read),
# never less.  A record is counted as parse() counts one (record_ok()).
# A last line without its newline was cut.
#
#   my $t = tally_new($label);
#   tally_line($t, $line) for each line;   # as read, newline included
#   my @problems = tally_end($t);          # one message per damage
#
# Readers that tell the user about damage (stackcollapse-offsample, the
# offsample command before it reads its inputs) skip the check when
# OFFSAMPLE_CHECKED is set: the offsample command has checked the inputs
# it hands them already.

sub tally_new {
	my ($label) = @_;
	return { label => $label, gen => undef, problems => [], last => "\n", n => 0,
		 col => column_index(@V1) };
}

sub _tally_gen_end {
	my ($t) = @_;
	my $g = $t->{gen} or return;
	$t->{gen} = undef;
	my $h = $g->{hdr};
	my $live = ($h->{source} // '') eq 'stacks';
	my @bad;
	for my $k (['samples', 'sum', 'samples'], ['records', 'nrec', 'records'],
		   ['blockers', 'nedge', 'blocker lines']) {
		my ($name, $got, $what) = @$k;
		next unless defined $h->{$name} && $h->{$name} =~ /^\d+\z/;
		my $want = $h->{$name};
		if ($g->{$got} < $want) {
			push @bad, "$g->{$got} of its $want $what";
		} elsif ($g->{$got} > $want && !$live) {
			push @bad, "$g->{$got} $what where its header says $want";
		}
	}
	push @bad, 'no "# columns:" line (cut in its header)'
		if !$g->{columns} && $g->{format} >= 2 && !$g->{nrec};
	return unless @bad;
	my $where = defined $h->{generation} && $h->{generation} =~ /^\d+\z/
		? "generation $h->{generation}" : "generation at line $g->{line}";
	push @{$t->{problems}}, "$t->{label}: cut short or damaged: $where holds " . join(', ', @bad);
}

sub tally_line {
	my ($t, $line) = @_;
	$t->{n}++;
	$t->{last} = $line;
	my ($kind, @v) = line_kind($line);
	if ($kind eq 'gen') {
		_tally_gen_end($t);
		$t->{gen} = { format => $v[0], hdr => {}, sum => 0, nrec => 0, nedge => 0,
			      line => $t->{n} };
		$t->{col} = column_index(@V1);
		return;
	}
	my $g = $t->{gen} or return;
	if ($kind eq 'columns') {
		$t->{col} = column_index(@{$v[0]});
		$g->{columns} = 1;
	} elsif ($kind eq 'header') {
		$g->{hdr}{$v[0]} //= $v[1];
	} elsif ($kind eq 'edge') {
		$g->{nedge}++;
	} elsif ($kind eq 'record') {
		(my $l = $line) =~ s/\r?\n\z//;
		my @f = split /\t/, $l, -1;
		return unless record_ok(\@f, $t->{col});
		$g->{nrec}++;
		$g->{sum} += $f[$t->{col}{count}];
	}
}

sub tally_end {
	my ($t) = @_;
	_tally_gen_end($t);
	push @{$t->{problems}}, "$t->{label}: cut short: its last line has no end (line $t->{n})"
		if $t->{n} && $t->{last} !~ /\n\z/;
	return @{$t->{problems}};
}

# damage(LABEL, FILE): the problems tally_end() finds in FILE.
sub damage {
	my ($label, $file) = @_;
	my $fh = open_input($file);
	my $t = tally_new($label);
	tally_line($t, $_) while <$fh>;
	close $fh if $file ne '-';
	return tally_end($t);
}

# ---------------------------------------------------------------- reader

# parse(FILES) -> { gens => [hdr hashes], recs => [record hashes], bad => n }
# A file may hold several generations (concatenated files).  A record's
# "id" is its position among its generation's records (what "# blocker:"
# lines name); each generation's "edges" are those lines as hashes.
sub parse {
	my @files = @_;
	my (@gens, @recs);
	my $bad = 0;
	for my $file (@files) {
		my $fh = open_input($file);
		my %col = %{column_index(@V1)};
		my $g;
		while (my $line = <$fh>) {
			$line =~ s/\r?\n\z//;
			my ($kind, @v) = line_kind($line);
			next if $kind eq 'blank';
			if ($kind eq 'gen') {
				$g = { format => $v[0], file => $file, extra => [] };
				push @gens, $g;
				%col = %{column_index(@V1)};
				next;
			}
			if ($kind ne 'record') {
				next unless $g;
				# Waiter -> holder edges (module 0.3): TAB-separated
				# name=value fields, records named by their id.
				if ($kind eq 'edge') {
					my %e = map { /^([a-z]+)=(.*)\z/s ? ($1, $2) : () } split /\t/, $v[0];
					push @{$g->{edges}}, \%e if defined $e{samples} && $e{samples} =~ /^\d+\z/;
					next;
				}
				@v = ('columns', $v[1]) if $kind eq 'columns';
				next unless $kind eq 'columns' || $kind eq 'header';
				my ($k, $v) = @v;
				if ($k eq 'columns') {
					my @n = split /\s+/, $v;
					%col = %{column_index(@n)};
					$g->{has}{$_} = 1 for @n;
				}
				# offsample-symbolize: a file's GNU build-id, by its
				# path as frames print it.
				$g->{build_id}{$2} = $1 if $k eq 'build-id' && $v =~ /\A([0-9a-f]{2,128}) path=(.+)\z/s;
				push @{$g->{extra}}, [$k, $v] unless exists $g->{$k};
				$g->{$k} //= $v;
				next;
			}
			my @f = split /\t/, $line, -1;
			if (!$g || !record_ok(\@f, \%col)) {
				$bad++;
				next;
			}
			# Its id: the kernel numbers records 1, 2, ... in output order.
			my %r = (gen => $g, line => $line, id => ++$g->{nid});
			for my $n (qw(count reason state pid tid comm tname kstack ustack wobj cgroup)) {
				my $v = defined $col{$n} && $col{$n} < @f ? $f[$col{$n}] : '-';
				$v = '-' if $v eq '';
				$r{$n} = $v;
			}
			push @recs, \%r;
		}
		close $fh if $file ne '-';
	}
	return { gens => \@gens, recs => \@recs, bad => $bad };
}

# renumber_edge(LINE, \%NEWID): a "# blocker:" line for a file whose
# records were filtered (NEWID: old record id -> new id, for the records
# kept).  Returns the line with wrec/hrec renumbered, a dropped holder
# record as "hrec=-"; undef when the waiter's record was dropped.
sub renumber_edge {
	my ($line, $newid) = @_;
	(my $l = $line) =~ s/\r?\n\z//;
	my @f = split /\t/, $l, -1;
	my $keep = 0;
	for (@f) {
		if (/^wrec=(\d+)\z/) {
			$keep = defined $newid->{$1};
			$_ = "wrec=$newid->{$1}" if $keep;
		} elsif (/^hrec=(\d+)\z/) {
			$_ = defined $newid->{$1} ? "hrec=$newid->{$1}" : 'hrec=-';
		}
	}
	return $keep ? join("\t", @f) . "\n" : undef;
}

# "func+0x6d/0x150 [mod]" -> "func [mod]" (or unchanged with offsets).
sub kfunc {
	my ($f, $offsets) = @_;
	return $f if $offsets;
	$f =~ s/\+0x[0-9a-fA-F]+(?:\/0x[0-9a-fA-F]+)?(?= \[|\z)//;
	return $f;
}
# A user frame named by offsample-symbolize, "func+0x12 (libc.so.6)" ->
# "func (libc.so.6)"; others (not named, replaced, [anon]+0x...) unchanged.
sub ufunc {
	my ($f, $offsets) = @_;
	# A Python function: "[py]QUAL (/dir/FILE:LINE)" -> "QUAL (FILE:LINE)".
	return "$1 ($2)" if $f =~ m{^\[py\](.*?) \((?:.*/)?([^/]*:\d+)\)\z}s;
	return $f if $offsets || $f =~ m{^/};
	$f =~ s/^(.+?)\+0x[0-9a-fA-F]+( \([^()]*\))\z/$1$2/s;
	return $f;
}

# Frames of a record, leaf first: kernel frames, then user frames.
sub frames {
	my ($r, $offsets) = @_;
	my @k = $r->{kstack} eq '-' ? () : map { kfunc($_, $offsets) } grep { $_ ne '' } split /;/, $r->{kstack};
	my @u = $r->{ustack} eq '-' ? () : map { ufunc($_, $offsets) } grep { $_ ne '' } split /;/, $r->{ustack};
	return (\@k, \@u);
}

1;
