# SPDX-License-Identifier: GPL-2.0
#
# OffsampleDebuginfo - the slow half of offsample-symbolize: reading a
# file's symbols when its cache has no answer (nm), and the debug
# information of stripped files kept elsewhere: .gnu_debuglink files (CRC
# checked), MiniDebugInfo (.gnu_debugdata, unpacked with xz) and the
# file a debuginfod server gave (OffsampleDebuginfod, the client).  The
# symbolizer finds out which of them exist (cheap: section headers, stat)
# and requires this module only on a cache miss or to ask debuginfod, so
# that a warm run loads none of it.  An installed offsample-symbolize
# carries it inline as text (packaging/inline-reader.pl).  Not a user
# command.
#
# Perl 5, core modules only; nm (binutils) and xz are run as programs
# when present.
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

sub tmp_dir {
	my $d = $ENV{TMPDIR};
	return defined $d && $d ne '' && -d $d && -w _ ? $d : '/tmp';
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

# crc_ok(PATH, CRC): PATH's CRC-32 is CRC (zlib's crc32, as
# .gnu_debuglink holds it; Compress::Raw::Zlib is the part of
# Compress::Zlib that computes it, at a quarter of the loading time).
sub crc_ok {
	my ($path, $want) = @_;
	require Compress::Raw::Zlib;
	require Fcntl;
	# A candidate lies in the directory of the program's owner: no
	# FIFO (O_NONBLOCK, then a regular file on the handle), and no file
	# bigger than any real debug file (a sparse file of 20 GB cost a
	# root cron run nearly a minute of reading).
	sysopen(my $fh, $path, Fcntl::O_RDONLY() | Fcntl::O_NONBLOCK()) or return 0;
	binmode $fh;
	if (!-f $fh || -s _ > (2 << 30)) {
		close $fh;
		return 0;
	}
	my ($crc, $buf) = (0, '');
	while (read($fh, $buf, 1 << 20)) {
		$crc = Compress::Raw::Zlib::crc32($buf, $crc);
	}
	close $fh;
	return $crc == $want;
}

# mini_elf(FILE, OFFSET, SIZE): the ELF file that FILE's .gnu_debugdata
# section (OFFSET, SIZE) holds xz-compressed, unpacked by `xz -dc` into a
# temporary file: its path (the caller removes it), or undef.
sub mini_elf {
	my ($file, $off, $size) = @_;
	# Real MiniDebugInfo is kilobytes to a few megabytes: bounded in
	# and out, so that a crafted section cannot fill the disk (a 0.5 MB
	# section of concatenated streams unpacked to 3 GB).
	return if $size > 16 << 20;
	my $data = '';
	open(my $in, '<:raw', $file) or return;
	seek($in, $off, 0) or return;
	read($in, $data, $size);
	close $in;
	return if length($data) != $size;
	my ($out, $tmp) = temp_file(tmp_dir(), 'offsample-minidebuginfo') or return;
	local $SIG{PIPE} = 'IGNORE';
	my $pid = open(my $to, '|-');
	if (!defined $pid) {
		unlink $tmp;
		return;
	}
	if (!$pid) {
		open(STDOUT, '>&', $out);
		open(STDERR, '>', '/dev/null');
		no warnings 'exec';
		# ulimit -f: 512-byte blocks (POSIX), 64 MiB; past it xz gets
		# SIGXFSZ and the unpacking counts as failed.
		exec { 'sh' } 'sh', '-c',
			'ulimit -f 131072 && exec xz -dc --single-stream --memlimit-decompress=64MiB';
		require POSIX;
		POSIX::_exit(127);
	}
	binmode $to;
	print $to $data;
	my $ok = close($to);
	my $sig = $? & 127;
	close $out;
	if ($sig == 25) {	# SIGXFSZ: past the 64 MiB limit
		unlink $tmp;
		note("mini $file", "$file: .gnu_debugdata unpacks to more than 64 MiB; named from its own symbols");
		return;
	}
	my $magic = '';
	if ($ok && open(my $e, '<:raw', $tmp)) {
		read($e, $magic, 4);
		close $e;
	}
	return $tmp if $magic eq "\x7fELF";
	unlink $tmp;
	note("mini $file", "$file: .gnu_debugdata is not an xz-compressed ELF file; named from its own symbols");
	return;
}

# symbols(FILE, SRC): the symbols that name FILE's frames, and whether
# they may be cached (not when a program that would have given more was
# missing).  SRC says what the symbolizer found, best first:
#   debug => PATH                  the debug file named by the build-id
#   link => [[TAG, PATH]...], crc => CRC
#                                  the files .gnu_debuglink names that
#                                  exist, in GDB's order; the first with
#                                  the right CRC is used
#   dfd => PATH, dfd_id => BUILDID the debuginfod cache's debug file, or
#                                  the build-id to ask for when the
#                                  debuglink files fail (dfd is then set)
#   mini => [OFFSET, SIZE]         FILE's .gnu_debugdata section
# The first that has symbols wins; MiniDebugInfo's are merged with
# FILE's own (.dynsym); without any, FILE's own.
sub symbols {
	my ($file, $src) = @_;
	if (!have('nm')) {
		note('nm', 'nm (binutils) not found; user frames left unnamed');
		return ([], 0);
	}
	my $s;
	if (defined $src->{debug}) {
		$s = nm_syms($src->{debug});
		return ($s, 1) if @$s;
	}
	for my $c (@{$src->{link} || []}) {
		next unless crc_ok($c->[1], $src->{crc});
		$s = nm_syms($c->[1]);
		return ($s, 1) if @$s;
		last;
	}
	$src->{dfd} //= (require OffsampleDebuginfod) && OffsampleDebuginfod::dfd_find($src->{dfd_id}, 1)
		if defined $src->{dfd_id};
	if (defined $src->{dfd}) {
		$s = nm_syms($src->{dfd});
		return ($s, 1) if @$s;
	}
	if ($src->{mini}) {
		if (!have('xz')) {
			note('xz', "xz not found: MiniDebugInfo (.gnu_debugdata) not read, files that have it are named from their .dynsym only (install xz-utils)");
			return (nm_syms($file), 0);
		}
		my $m = mini_elf($file, @{$src->{mini}});
		if (defined $m) {
			$s = nm_syms($file, $m);
			unlink $m;
			return ($s, 1);
		}
	}
	return (nm_syms($file), 1);
}

1;
