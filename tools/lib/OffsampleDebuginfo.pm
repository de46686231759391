# SPDX-License-Identifier: GPL-2.0
#
# OffsampleDebuginfo - the slow half of offsample-symbolize: reading a
# file's symbols when its cache has no answer (nm, the file or its debug
# file).  The symbolizer finds out which files there are (cheap: headers,
# stat) and requires this module only on a cache miss, so that a warm run
# loads none of it.  An installed offsample-symbolize carries it inline as
# text (packaging/inline-reader.pl).  Not a user command.
#
# Perl 5, core modules only; nm (binutils) is run as a program.
package OffsampleDebuginfo;

use strict;
use warnings;
use Fcntl qw(O_WRONLY O_CREAT O_EXCL);

our $ME = 'offsample-symbolize';	# the name in messages

my (%noted, %have);

# note(KEY, MESSAGE): MESSAGE on stderr, once per KEY and run.
sub note {
	my ($key, $msg) = @_;
	print STDERR "$ME: $msg\n" unless $noted{$key}++;
}

# have(PROGRAM): PROGRAM is on PATH.
sub have {
	my ($p) = @_;
	$have{$p} //= (grep { $_ ne '' && -f "$_/$p" && -x _ } split /:/, $ENV{PATH} // '') ? 1 : 0;
	return $have{$p};
}

# temp_file(DIR, NAME): a new file DIR/NAME.PID.RANDOM, mode 0600, as
# (HANDLE, PATH), or () when it cannot be made.
sub temp_file {
	my ($dir, $name) = @_;
	for (1 .. 20) {
		my $p = sprintf('%s/%s.%d.%x', $dir, $name, $$, int(rand(0x7fffffff)));
		my $fh;
		return ($fh, $p) if sysopen($fh, $p, O_WRONLY | O_CREAT | O_EXCL, 0600);
		return () unless $!{EEXIST};
	}
	return ();
}

# run_lines(CMD...): its output lines (no shell, stderr discarded).
sub run_lines {
	my @cmd = @_;
	my $pid = open(my $fh, '-|');
	return () unless defined $pid;
	if (!$pid) {
		open(STDERR, '>', '/dev/null');
		no warnings 'exec';
		exec { $cmd[0] } @cmd;
		require POSIX;
		POSIX::_exit(127);
	}
	my @l = <$fh>;
	close $fh;
	return @l;
}

# ---------------------------------------------------------------- symbols

# nm_syms(SRC...): the functions of the SRC files (nm, demangled),
# merged, as [[addr, size, name]...] sorted by address; at one address,
# a sized symbol wins, then a global one.
sub nm_syms {
	my (@srcs) = @_;
	my %syms;
	for my $src (@srcs) {
		for my $dyn (0, 1) {
			my @cmd = ('nm', '--defined-only', '-n', '-S', '-C');
			push @cmd, '-D' if $dyn;
			for (run_lines(@cmd, $src)) {
				chomp;
				# addr [size] type name
				next unless /^([0-9a-f]+)(?: ([0-9a-f]+))? ([TtWwi]) (.+)$/;
				my ($a, $s, $t, $n) = (hex($1), defined $2 ? hex($2) : 0, $3, $4);
				next if !$a;
				my $global = $t =~ /[TWi]/ ? 1 : 0;
				my $old = $syms{$a};
				if (!$old || (!$old->[0] && $s) || ($s && $old->[0] && $global && !$old->[2])) {
					$syms{$a} = [$s, $n, $global];
				}
			}
		}
	}
	return [map { [$_, $syms{$_}[0], $syms{$_}[1]] } sort { $a <=> $b } keys %syms];
}

# save_cache(FILE, SYMS): write the cache entry (the format load_cache of
# offsample-symbolize reads) through a temporary file; errors are ignored.
sub save_cache {
	my ($file, $syms) = @_;
	(my $dir = $file) =~ s{/[^/]*\z}{};
	(my $base = $file) =~ s{\A.*/}{};
	my ($fh, $tmp) = temp_file($dir, $base) or return;
	my $ok = print $fh "offsample-syms 2\n";
	$ok &&= print $fh "S $_->[0] $_->[1] $_->[2]\n" for @$syms;
	$ok &&= print $fh "E\n";
	if (close($fh) && $ok) {
		rename($tmp, $file) or unlink $tmp;
	} else {
		unlink $tmp;
	}
}

# symbols(FILE, SRC): the symbols that name FILE's frames, and whether
# they may be cached (not when nm is missing).  SRC says what the
# symbolizer found: debug => PATH, the debug file named by the build-id.
# Its symbols, else FILE's own.
sub symbols {
	my ($file, $src) = @_;
	if (!have('nm')) {
		note('nm', 'nm (binutils) not found; user frames left unnamed');
		return ([], 0);
	}
	if (defined $src->{debug}) {
		my $s = nm_syms($src->{debug});
		return ($s, 1) if @$s;
	}
	return (nm_syms($file), 1);
}

1;
