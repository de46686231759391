# SPDX-License-Identifier: GPL-2.0
#
# OffsampleStacks - the reader of the offsample stacks format (format v1
# and v2, docs/FORMAT.md), shared by the tools in this directory
# (offsample-lib.pl, offsample-pprof.pl).  Not a user command.
#
# Errors are die()d as one line ending in "\n"; the callers turn them
# into their own messages.  Perl 5, core modules only.
package OffsampleStacks;

use strict;
use warnings;
use Exporter qw(import);

our @EXPORT_OK = qw(parse kfunc ufunc frames renumber_edge @V1 fail fail_on_die);

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

# ---------------------------------------------------------------- reader

our @V1 = qw(count reason state pid tid comm tname kstack);

# parse(FILES) -> { gens => [hdr hashes], recs => [record hashes], bad => n }
# A file may hold several generations (concatenated files).  A record's
# "id" is its position among its generation's records (what "# blocker:"
# lines name); each generation's "edges" are those lines as hashes.
sub parse {
	my @files = @_;
	my (@gens, @recs);
	my $bad = 0;
	for my $file (@files) {
		my $fh;
		if ($file eq '-') {
			$fh = \*STDIN;
		} elsif (-d $file) {
			die "$file: is a directory\n";
		} elsif (!open($fh, '<', $file)) {
			my $why = lc "$!";
			die "cannot open $file: $why\n";
		}
		my %col;
		@col{@V1} = (0 .. $#V1);
		my $g;
		while (my $line = <$fh>) {
			$line =~ s/\r?\n\z//;
			next if $line eq '';
			if ($line =~ /^# offsample stacks v(\d+)/) {
				$g = { format => $1, file => $file, extra => [] };
				push @gens, $g;
				%col = ();
				@col{@V1} = (0 .. $#V1);
				next;
			}
			if ($line =~ /^#/) {
				# Waiter -> holder edges (module 0.3): TAB-separated
				# name=value fields, records named by their id.
				if ($g && $line =~ /^# blocker: (.*)\z/) {
					my %e = map { /^([a-z]+)=(.*)\z/s ? ($1, $2) : () } split /\t/, $1;
					push @{$g->{edges}}, \%e if defined $e{samples} && $e{samples} =~ /^\d+\z/;
					next;
				}
				next unless $g && $line =~ /^# ([A-Za-z0-9_-]+):\s?(.*?)\s*\z/;
				my ($k, $v) = ($1, $2);
				if ($k eq 'columns') {
					%col = ();
					my @n = split /\s+/, $v;
					for my $i (0 .. $#n) { $col{$n[$i]} //= $i; }
					$g->{has}{$_} = 1 for @n;
				}
				push @{$g->{extra}}, [$k, $v] unless exists $g->{$k};
				$g->{$k} //= $v;
				next;
			}
			my @f = split /\t/, $line, -1;
			my ($ci, $ri, $ki) = @col{qw(count reason kstack)};
			if (!$g || !defined $ci || !defined $ri || !defined $ki
			    || @f <= $ki || @f <= $ci || @f <= $ri
			    || $f[$ci] !~ /^\d+\z/ || $f[$ri] !~ /^[^\s;]+\z/) {
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
