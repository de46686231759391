# SPDX-License-Identifier: GPL-2.0
#
# OffsampleDebuginfo - the slow half of offsample-symbolize: reading a
# file's symbols when its cache has no answer (nm), and the debug
# information of stripped files kept elsewhere: .gnu_debuglink files (CRC
# checked), MiniDebugInfo (.gnu_debugdata, unpacked with xz) and
# debuginfod servers (only when the user asked for them).  The symbolizer
# finds out which of them exist (cheap: section headers, stat) and
# requires this module only on a cache miss or to ask debuginfod, so that
# a warm run loads none of it.  An installed offsample-symbolize carries
# it inline as text (packaging/inline-reader.pl).  Not a user command.
#
# Perl 5, core modules only; nm (binutils), xz, debuginfod-find
# (elfutils) and curl are run as programs when present.
package OffsampleDebuginfo;

use strict;
use warnings;
use Fcntl qw(O_WRONLY O_CREAT O_EXCL);

our $ME = 'offsample-symbolize';	# the name in messages
our @URLS;		# debuginfod servers the user asked for (none: never asked)
our $DOWN_FILE;		# where a server that did not answer is remembered, or undef

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
	$src->{dfd} //= dfd_find($src->{dfd_id}, 1) if defined $src->{dfd_id};
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

# ---------------------------------------------------------------- debuginfod

# The client's cache (elfutils' layout, debuginfod-client-config(7)):
# DEBUGINFOD_CACHE_PATH, else an existing ~/.debuginfod_client_cache, else
# $XDG_CACHE_HOME/debuginfod_client or ~/.cache/debuginfod_client.
my $dfd_dir;
sub dfd_cache_dir {
	return $dfd_dir if defined $dfd_dir;
	my $v = $ENV{DEBUGINFOD_CACHE_PATH};
	return $dfd_dir = $v if defined $v && $v ne '';
	my $home = defined $ENV{HOME} && $ENV{HOME} ne '' ? $ENV{HOME} : '/';
	$home =~ s{/+\z}{};
	return $dfd_dir = "$home/.debuginfod_client_cache" if -d "$home/.debuginfod_client_cache";
	my $xdg = $ENV{XDG_CACHE_HOME};
	return $dfd_dir = (defined $xdg && $xdg ne '' ? $xdg : "$home/.cache") . '/debuginfod_client';
}

# How long a miss (a 0-byte file) is trusted: the cache's cache_miss_s.
sub dfd_miss_s {
	if (open(my $fh, '<', dfd_cache_dir() . '/cache_miss_s')) {
		my $v = <$fh>;
		return $1 if defined $v && $v =~ /^\s*(\d+)/;
	}
	return 600;
}

# DEBUGINFOD_TIMEOUT: how long a server may take to start answering
# (elfutils: 90 s when not set; a symbolizer that others wait for: 10).
sub dfd_timeout {
	my $t = $ENV{DEBUGINFOD_TIMEOUT};
	return defined $t && $t =~ /^\s*([1-9]\d{0,5})\s*\z/ ? $1 + 0 : 10;
}

# A server list that did not answer is remembered (DOWN_FILE: "TIME URLS")
# and not asked again for cache_miss_s seconds: `offsample top` and
# repeated reports do not wait for it at every run.
sub dfd_down {
	my ($mark) = @_;
	return 0 unless defined $DOWN_FILE;
	my $urls = join(' ', @URLS);
	if ($mark) {
		my ($fh, $tmp) = temp_file($DOWN_FILE =~ m{\A(.*)/} ? $1 : '.', 'debuginfod-down') or return 0;
		print $fh time, " $urls\n";
		return 1 if close($fh) && rename($tmp, $DOWN_FILE);
		unlink $tmp;
		return 0;
	}
	open(my $fh, '<', $DOWN_FILE) or return 0;
	my $l = <$fh> // '';
	return $l =~ /^(\d+) (.*)\n\z/ && $2 eq $urls && time - $1 < dfd_miss_s() ? 1 : 0;
}

my ($dfd_spent, $dfd_off) = (0, 0);

# dfd_find(BUILDID, ASK): the debug file of BUILDID in the debuginfod
# client cache (CACHE/BUILDID/debuginfo); when it has none (or a miss
# older than cache_miss_s) and ASK, the servers are asked first, by
# debuginfod-find (elfutils) when installed, else by curl, else by
# HTTP::Tiny (OFFSAMPLE_DEBUGINFOD_CLIENT picks one).  A run spends at
# most six times DEBUGINFOD_TIMEOUT asking; a server list that does not
# answer is not asked again (dfd_down).  Returns the path or undef.
sub dfd_find {
	my ($id, $ask) = @_;
	return unless @URLS && defined $id && $id =~ /\A(?:[0-9a-f]{2})+\z/;
	my $dir = dfd_cache_dir();
	my $f = "$dir/$id/debuginfo";
	my @st = stat $f;
	if (@st && -f _) {
		return $f if $st[7] > 0;
		return if time - $st[9] <= dfd_miss_s();
	}
	return unless $ask && !$dfd_off;
	if (dfd_down()) {
		$dfd_off = 1;
		return;
	}
	my $limit = 6 * dfd_timeout() - $dfd_spent;
	if ($limit < 1) {
		$dfd_off = 1;
		note('dfd', sprintf('debuginfod: %.0f s spent asking; not asked again in this run', $dfd_spent));
		return;
	}
	require Time::HiRes;
	my $t0 = Time::HiRes::time();
	my $how = $ENV{OFFSAMPLE_DEBUGINFOD_CLIENT} // '';
	$how = have('debuginfod-find') ? 'debuginfod-find' : have('curl') ? 'curl' : 'perl'
		unless $how eq 'perl' || ($how =~ /\A(?:debuginfod-find|curl)\z/ && have($how));
	if ($how ne 'debuginfod-find' && !mkdirs("$dir/$id")) {
		$dfd_off = 1;
		note('dfd', "debuginfod: cannot write in $dir (" . lc("$!") . '); not asked');
		return;
	}
	my ($got, $why) = $how eq 'debuginfod-find' ? via_find($id, $dir, $limit) : via_http($id, $dir, $limit, $how);
	$dfd_spent += Time::HiRes::time() - $t0;
	if (defined $why) {
		$dfd_off = 1;
		my $again = dfd_down(1) ? 'for ' . dfd_miss_s() . ' s' : 'in this run';
		note('dfd', "debuginfod: $why; not asked again $again");
		return;
	}
	return $got;
}

# mkdirs(DIR): DIR and the folders above it made (0700) where missing.
sub mkdirs {
	my ($dir) = @_;
	my $p = '';
	for (split m{/}, $dir) {
		$p .= $p eq '' && $_ eq '' ? '/' : $p =~ m{/\z} || $p eq '' ? $_ : "/$_";
		next if $_ eq '' || -d $p;
		mkdir($p, 0700) or -d $p or return 0;
	}
	return -d $dir && -w _;
}

# run_capped(SECONDS, CMD...): run CMD (stdout and stderr together),
# killed after SECONDS: (exit status, output), or () when it was killed
# or could not be started.
sub run_capped {
	my ($limit, @cmd) = @_;
	my $pid = open(my $fh, '-|');
	return () unless defined $pid;
	if (!$pid) {
		open(STDERR, '>&', \*STDOUT);
		open(STDIN, '<', '/dev/null');
		no warnings 'exec';
		exec { $cmd[0] } @cmd;
		require POSIX;
		POSIX::_exit(127);
	}
	my ($out, $end, $rin) = ('', Time::HiRes::time() + $limit, '');
	vec($rin, fileno($fh), 1) = 1;
	while (1) {
		my $wait = $end - Time::HiRes::time();
		if ($wait <= 0) {
			kill 'KILL', $pid;
			close $fh;
			return ();
		}
		my $n = select(my $rout = $rin, undef, undef, $wait);
		next if !$n || ($n < 0 && $!{EINTR});
		last if $n < 0 || !sysread($fh, my $buf, 65536);
		$out .= $buf;
	}
	close $fh;
	return ($? & 127 ? 128 + ($? & 127) : $? >> 8, $out);
}

# The real client: it keeps the cache itself (a miss: a 0-byte file).
sub via_find {
	my ($id, $dir, $limit) = @_;
	local $ENV{DEBUGINFOD_URLS} = join(' ', @URLS);
	local $ENV{DEBUGINFOD_CACHE_PATH} = $dir;
	local $ENV{DEBUGINFOD_TIMEOUT} = dfd_timeout();
	# One try, as our own client makes (elfutils: 2 retries, which made
	# a server that never answers cost three time-outs).
	local $ENV{DEBUGINFOD_RETRY_LIMIT} = $ENV{DEBUGINFOD_RETRY_LIMIT} // 0;
	delete local $ENV{DEBUGINFOD_PROGRESS};
	delete local $ENV{DEBUGINFOD_VERBOSE};
	my ($rc, $out) = run_capped($limit, 'debuginfod-find', 'debuginfo', $id);
	return (undef, sprintf('debuginfod-find not done within %d s asking %s', $limit, "@URLS")) unless defined $rc;
	if ($rc == 0) {
		my ($p) = $out =~ m{^(/.*)$}m;
		return ($p) if defined $p && -s $p;
	}
	# "Server query failed: No such file or directory": every server
	# said it has no such file.
	return () if $out =~ /No such file or directory/;
	my ($m) = $out =~ /([^\n]*\S)\s*\z/;
	return (undef, "debuginfod-find failed (" . ($m // "exit status $rc") . ") asking @URLS");
}

# Our own client: each server in turn; a miss only when all said 404.
sub via_http {
	my ($id, $dir, $limit, $how) = @_;
	my $t = dfd_timeout();
	my ($misses, $why, $end) = (0, undef, Time::HiRes::time() + $limit);
	for my $url (@URLS) {
		my $left = $end - Time::HiRes::time();
		if ($left < 1) {
			$why //= sprintf('%s: not asked, %d s spent', $url, $limit);
			last;
		}
		(my $u = $url) =~ s{/+\z}{};
		$u .= "/buildid/$id/debuginfo";
		my ($fh, $tmp) = temp_file("$dir/$id", '.debuginfo') or return (undef, "cannot write in $dir/$id");
		binmode $fh;
		my ($code, $err) = $how eq 'curl' ? get_curl($u, $fh, $tmp, $t, $left) : get_tiny($u, $fh, $t, $left);
		close $fh;
		my $magic = '';
		if ($code == 200 && open(my $e, '<:raw', $tmp)) {
			read($e, $magic, 4);
			close $e;
		}
		if ($magic eq "\x7fELF") {
			chmod 0400, $tmp;
			return ("$dir/$id/debuginfo") if rename($tmp, "$dir/$id/debuginfo");
		}
		unlink $tmp;
		if ($code == 404) {
			$misses++;
		} else {
			$why //= "$url: " . ($code == 200 ? 'not an ELF file' : $err);
		}
	}
	if ($misses == @URLS && open(my $neg, '>', "$dir/$id/debuginfo")) {
		close $neg;
	}
	return (undef, $why);
}

sub get_curl {
	my ($u, $fh, $tmp, $t, $left) = @_;
	my ($rc, $out) = run_capped($left + 1, 'curl', '-sS', '-o', $tmp, '-w', '\n%{http_code}\n',
		'--connect-timeout', $t, '--speed-limit', 1, '--speed-time', $t, '--max-time', int($left) + 1, $u);
	return (0, 'not done within ' . int($left) . ' s') unless defined $rc;
	my ($code) = $out =~ /(\d{3})\s*\z/;
	my ($m) = $out =~ /curl: \(\d+\) ([^\n]*)/;
	return (($code // 0) + 0, $m // ($code ? "HTTP $code" : "curl exit status $rc"));
}

sub get_tiny {
	my ($u, $fh, $t, $left) = @_;
	require HTTP::Tiny;
	my $r = eval {
		local $SIG{ALRM} = sub { die 'not done within ' . int($left) . " s\n" };
		alarm(int($left) + 1);
		my $res = HTTP::Tiny->new(timeout => $t, agent => "$ME ", verify_SSL => 1)->request('GET', $u,
			{ data_callback => sub { print $fh $_[0] } });
		alarm 0;
		$res;
	};
	alarm 0;
	if (!$r) {
		(my $m = $@ || 'failed') =~ s/\s+\z//;
		return (0, $m);
	}
	my $m = $r->{status} == 599 ? $r->{content} // '' : "HTTP $r->{status} $r->{reason}";
	$m =~ s/\s+\z//;
	$m =~ s/ at \S+ line \d+\.?\z//;
	return ($r->{status}, $m);
}

1;
