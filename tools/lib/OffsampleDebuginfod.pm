# SPDX-License-Identifier: GPL-2.0
#
# OffsampleDebuginfod - offsample-symbolize's debuginfod client: the
# debug file of a build-id from the servers the user named
# (DEBUGINFOD_URLS or --debuginfod), through the elfutils client's cache
# and layout, fetched by debuginfod-find (elfutils) when installed, else
# by curl, else by HTTP::Tiny; bounded in time, size and trust (a file is
# used only when its build-id is the one asked for; the cache only when
# it is the user's own).  Required only when the user asked for a
# server; an installed offsample-symbolize carries it inline as text
# (packaging/inline-reader.pl).  Not a user command.
#
# Perl 5, core modules only; debuginfod-find and curl run as programs.
package OffsampleDebuginfod;

use strict;
use warnings;
use Errno qw(EACCES);
use OffsampleDebuginfo;

our @URLS;		# debuginfod servers the user asked for (none: never asked)
our $DOWN_FILE;		# where a server that did not answer is remembered, or undef
our $BUILD_ID;		# sub: the build-id (hex) of an ELF file, undef if none

*note = \&OffsampleDebuginfo::note;
*have = \&OffsampleDebuginfo::have;
*temp_file = \&OffsampleDebuginfo::temp_file;
my $ME = $OffsampleDebuginfo::ME;

# servers(): the servers to ask, as [URL, IMA policy], in the order
# given.  @URLS holds the URLs and, as elfutils 0.190+ reads
# DEBUGINFOD_URLS, the tokens ima:enforcing, ima:permissive and
# ima:ignore, each setting the policy of the URLs after it (ignore
# before the first).  debuginfod-find is given them all as they are.
sub servers {
	my ($ima, @s) = ('ignore');
	for (@URLS) {
		if (/\Aima:(\S+)\z/) {
			$ima = $1;
		} else {
			push @s, [$_, $ima];
		}
	}
	return @s;
}

# askable(CHECKS): the servers to ask (servers()) by a client that checks
# IMA signatures (CHECKS true) or does not: one that does not never asks
# a server under ima:enforcing.
sub askable {
	my ($checks) = @_;
	my @s;
	for (servers()) {
		if ($_->[1] eq 'enforcing' && !$checks) {
			note("ima $_->[0]", "debuginfod: $_->[0] not asked: ima:enforcing in DEBUGINFOD_URLS asks for signed files, which only debuginfod-find (elfutils 0.190 or later) checks");
			next;
		}
		push @s, $_;
	}
	return @s;
}

# find_ima(): the installed debuginfod-find reads ima: tokens and checks
# signatures (elfutils 0.190 or later); an older one takes a token for a
# URL.
my $find_ima;
sub find_ima {
	return $find_ima if defined $find_ima;
	my (undef, $out) = run_capped(10, 0, 'debuginfod-find', '--version');
	return $find_ima = defined $out && $out =~ /\(elfutils\) (\d+)\.(\d+)/ && ($1 > 0 || $2 >= 190) ? 1 : 0;
}

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

# dfd_cache_ok(): the client cache is this user's own: a directory owned
# by the effective user, made (mode 0700) when missing, that nobody else
# can change, nor any directory above it (unsafe).  Files in another's
# cache could name frames falsely (a root symbolizer run with a user's
# HOME), and a link planted where a miss is written, or a directory
# above swapped for a link, would make it write elsewhere.
my $dfd_cache_ok;
sub dfd_cache_ok {
	return $dfd_cache_ok if defined $dfd_cache_ok;
	my $dir = dfd_cache_dir();
	if ($dir !~ m{\A/}) {
		require Cwd;
		$dir = (Cwd::getcwd() // '.') . "/$dir";
	}
	$dir =~ s{(?<=.)/+\z}{};
	# What exists of it is checked before anything is made in it.
	my $have = $dir;
	$have =~ s{/[^/]*\z}{} while $have ne '' && !-e $have;
	my $why = unsafe($have eq '' ? '/' : $have, $have eq $dir);
	if (!defined $why && $have ne $dir) {
		if (!mkdirs($dir)) {
			note('dfd', "debuginfod: cannot make the cache $dir (" . lc("$!") . '); not asked');
			return $dfd_cache_ok = 0;
		}
		$why = unsafe($dir, 1);
	}
	if (defined $why) {
		note('dfd', "debuginfod: the cache $dir is not private to user $>: $why; not used (DEBUGINFOD_CACHE_PATH chooses another)");
		return $dfd_cache_ok = 0;
	}
	return $dfd_cache_ok = 1;
}

# unsafe(DIR, LAST): why another user than root and the effective one
# could change what DIR names (the links in it resolved), or undef when
# none can: every directory from / down to DIR is owned by root or the
# user, and writable by nobody else (by its group only when that is the
# user's own group: a group per user, umask 002), but a sticky one
# (/tmp) where others cannot move what is not theirs.  With LAST, DIR
# itself must be the user's, and not sticky-writable by others either.
sub unsafe {
	my ($dir, $last) = @_;
	require Cwd;
	my $real = Cwd::realpath($dir);
	return "cannot resolve $dir (" . lc("$!") . ')' unless defined $real;
	my $own = getpwuid($>) // '';
	my @parts = grep { $_ ne '' } split m{/}, $real;
	my $p = '';
	for my $i (-1 .. $#parts) {
		$p = $i < 0 ? '/' : $p eq '/' ? "/$parts[$i]" : "$p/$parts[$i]";
		my @st = stat $p;
		return "cannot read $p (" . lc("$!") . ')' unless @st;
		return "$p is not a directory" unless -d _;
		my ($mode, $uid, $gid) = @st[2, 4, 5];
		my $end = $last && $i == $#parts;
		my $desc = sprintf('%s (owner %d, mode %04o)', $p, $uid, $mode & 07777);
		return "$desc is another user's" if $uid != $> && ($end || $uid != 0);
		my $gw = $mode & 020 && $gid != 0 && (getgrgid($gid) // '') ne $own;
		next unless $mode & 002 || $gw;
		return "$desc is writable by others" if $end || !($mode & 01000);
	}
	return;
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

# DEBUGINFOD_MAXSIZE: the largest file fetched, in bytes; 0: no limit
# (as in elfutils).  Not set: 1 GiB here (elfutils: no limit), so that a
# server cannot fill the disk.
sub dfd_maxsize {
	my $v = $ENV{DEBUGINFOD_MAXSIZE};
	return defined $v && $v =~ /^\s*(\d{1,15})\s*\z/ ? $1 + 0 : 1 << 30;
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

# id_of(PATH): the build-id of the ELF file PATH ('' if none).
sub id_of {
	return $BUILD_ID ? $BUILD_ID->($_[0]) // '' : '';
}

# id_ok(GOT, BUILDID): a file whose build-id reads GOT (id_of) may be
# the debug file of BUILDID: GOT is BUILDID, or none could be read from
# its program headers (eu-strip -f leaves them stale; only a build-id
# that differs refuses).
sub id_ok {
	my ($got, $id) = @_;
	return $got eq '' || $got eq $id;
}

# put_miss(DIR, BUILDID): the client cache's miss (a 0-byte
# DIR/BUILDID/debuginfo), made beside and renamed into place.
sub put_miss {
	my ($dir, $id) = @_;
	my ($fh, $tmp) = temp_file("$dir/$id", '.debuginfo') or return;
	close $fh;
	rename($tmp, "$dir/$id/debuginfo") or unlink $tmp;
}

my ($dfd_spent, $dfd_off, %dfd_asked) = (0, 0);

# dfd_find(BUILDID, ASK): the debug file of BUILDID in the debuginfod
# client cache (CACHE/BUILDID/debuginfo); when it has none (or a miss
# older than cache_miss_s) and ASK, the servers are asked first, by
# debuginfod-find (elfutils) when installed, else by curl, else by
# HTTP::Tiny (OFFSAMPLE_DEBUGINFOD_CLIENT picks one).  A run spends at
# most six times DEBUGINFOD_TIMEOUT asking; a server list that does not
# answer is not asked again (dfd_down).  A file is used only when its
# build-id is BUILDID.  Returns the path or undef.
sub dfd_find {
	my ($id, $ask) = @_;
	# elfutils' limit: a build-id is at most 64 bytes.
	return unless @URLS && defined $id && $id =~ /\A(?:[0-9a-f]{2}){1,64}\z/ && dfd_cache_ok();
	my $dir = dfd_cache_dir();
	my $f = "$dir/$id/debuginfo";
	my @st = stat $f;
	if (@st && -f _) {
		if ($st[7] > 0) {
			my $got = id_of($f);
			return $f if id_ok($got, $id);
			# (Another client's or an old server's mistake: the
			# cache is this user's own, dfd_cache_ok.)
			my $gone = unlink($f) ? 'removed' : 'not used';
			note("id $f", "debuginfod: $f is not the debug file of $id (its build-id: " . ($got || 'none') . "); $gone");
			return unless $gone eq 'removed';
		} elsif (time - $st[9] <= dfd_miss_s()) {
			return;
		}
	}
	# Asked at most once a run per build-id (file_info and symbols may
	# both come here for one file).
	return unless $ask && !$dfd_off && !$dfd_asked{$id}++;
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
	my ($got, $why, $big) = $how eq 'debuginfod-find' ? via_find($id, $dir, $limit) : via_http($id, $dir, $limit, $how);
	$dfd_spent += Time::HiRes::time() - $t0;
	if ($big) {
		note("big $id", sprintf('debuginfod: the debug file of %s is larger than %d bytes (DEBUGINFOD_MAXSIZE)%s; not fetched',
			$id, dfd_maxsize(), $big == 2 ? ' or could not be written to the cache' : ''));
		return;
	}
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
	return 0 unless -d $dir;
	return 1 if -w _;
	$! = EACCES;	# (-w sets no errno)
	return 0;
}

# run_capped(SECONDS, BYTES, CMD...): run CMD (stdout and stderr
# together), killed after SECONDS; with BYTES, no file it writes may grow
# past BYTES (ulimit -f: SIGXFSZ, exit status 153).  Returns (exit
# status, output), or () when it was killed or could not be started.
sub run_capped {
	my ($limit, $bytes, @cmd) = @_;
	# 512-byte blocks (POSIX sh), one more for the part of the last.
	# Lowered only: a soft limit cannot be raised past the hard one,
	# and one lower than BYTES is the user's.
	@cmd = ('sh', '-c', 'l=$(ulimit -f) && { [ "$l" != unlimited ] && [ "$l" -le "$0" ] || ulimit -f "$0"; } && exec "$@"',
		int($bytes / 512) + 1, @cmd) if $bytes;
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

# The real client: it keeps the cache itself (a miss: a 0-byte file),
# and checks IMA signatures where DEBUGINFOD_URLS asks for it.
sub via_find {
	my ($id, $dir, $limit) = @_;
	my $max = dfd_maxsize();
	# An elfutils before 0.190 is given the URLs alone.
	my $urls = find_ima() ? join(' ', @URLS) : join(' ', map { $_->[0] } askable(0));
	return () if $urls eq '';
	local $ENV{DEBUGINFOD_URLS} = $urls;
	local $ENV{DEBUGINFOD_CACHE_PATH} = $dir;
	local $ENV{DEBUGINFOD_TIMEOUT} = dfd_timeout();
	local $ENV{DEBUGINFOD_MAXSIZE} = $max;
	# One try, as our own client makes (elfutils: 2 retries, which made
	# a server that never answers cost three time-outs).
	local $ENV{DEBUGINFOD_RETRY_LIMIT} = $ENV{DEBUGINFOD_RETRY_LIMIT} // 0;
	delete local $ENV{DEBUGINFOD_PROGRESS};
	delete local $ENV{DEBUGINFOD_VERBOSE};
	my ($rc, $out) = run_capped($limit, $max, 'debuginfod-find', 'debuginfo', $id);
	return (undef, sprintf('debuginfod-find not done within %d s asking %s', $limit, "@URLS")) unless defined $rc;
	# Larger than DEBUGINFOD_MAXSIZE: the server said so (EFBIG), or it
	# did not and the file outgrew the ulimit.
	# Either is remembered as a miss (as our own client does), so that
	# the next runs do not fetch it again for cache_miss_s seconds.
	my $big = $rc == 153 || $out =~ /File too large/ ? 1
		# A write to the cache failed (EIO): the ulimit (libcurl
		# sees EFBIG), or a full or failing disk.
		: $max && $out =~ /Input\/output error/ ? 2 : 0;
	if ($big) {
		put_miss($dir, $id) if mkdirs("$dir/$id");
		return (undef, undef, $big);
	}
	if ($rc == 0) {
		my ($p) = $out =~ m{^(/.*)$}m;
		if (defined $p && -s $p) {
			my $got = id_of($p);
			return ($p) if id_ok($got, $id);
			return (undef, "a server of @URLS gave a file of build-id " . ($got || 'none') . " for $id");
		}
	}
	# "Server query failed: No such file or directory": every server
	# said it has no such file.
	return () if $out =~ /No such file or directory/;
	my ($m) = $out =~ /([^\n]*\S)\s*\z/;
	return (undef, "debuginfod-find failed (" . ($m // "exit status $rc") . ") asking @URLS");
}

# Our own client: each server in turn; a miss only when all that were
# asked said 404.  Servers under ima:enforcing are not asked (only
# debuginfod-find checks signatures).
sub via_http {
	my ($id, $dir, $limit, $how) = @_;
	my ($t, $max) = (dfd_timeout(), dfd_maxsize());
	my ($asked, $misses, $big, $why, $end) = (0, 0, 0, undef, Time::HiRes::time() + $limit);
	# What a run that was killed while fetching left behind.
	if (opendir(my $dh, "$dir/$id")) {
		for (grep { /\A\.debuginfo\.\d+\.[0-9a-f]+\z/ } readdir $dh) {
			my @st = lstat "$dir/$id/$_";
			unlink "$dir/$id/$_" if @st && -f _ && $st[9] < time - 3600;
		}
		closedir $dh;
	}
	my $all = () = servers();
	for my $sv (askable(0)) {
		my $url = $sv->[0];
		my $left = $end - Time::HiRes::time();
		if ($left < 1) {
			$why //= sprintf('%s: not asked, %d s spent', $url, $limit);
			last;
		}
		$asked++;
		(my $u = $url) =~ s{/+\z}{};
		$u .= "/buildid/$id/debuginfo";
		my ($fh, $tmp) = temp_file("$dir/$id", '.debuginfo') or return (undef, "cannot write in $dir/$id");
		binmode $fh;
		my ($code, $err, $over) = $how eq 'curl' ? get_curl($u, $tmp, $t, $left, $max) : get_tiny($u, $fh, $t, $left, $max);
		close $fh;
		$over ||= $max && $code == 200 && (-s $tmp // 0) > $max;
		my $magic = '';
		if ($code == 200 && !$over && open(my $e, '<:raw', $tmp)) {
			read($e, $magic, 4);
			close $e;
		}
		if ($magic eq "\x7fELF") {
			my $got = id_of($tmp);
			if (id_ok($got, $id)) {
				chmod 0400, $tmp;
				return ("$dir/$id/debuginfo") if rename($tmp, "$dir/$id/debuginfo");
				$err = "cannot rename it into $dir/$id (" . lc("$!") . ')';
			} else {
				$err = 'a file of build-id ' . ($got || 'none');
			}
		}
		unlink $tmp;
		if ($over) {
			$big = 1;
		} elsif ($code == 404) {
			$misses++;
		} else {
			$why //= "$url: " . ($code == 200 ? $err // 'not an ELF file' : $err);
		}
	}
	# Too large is remembered as a miss too: not fetched again at every
	# run for cache_miss_s seconds.
	put_miss($dir, $id) if $asked && $asked == $all && ($big || $misses == $asked);
	return (undef, $why, $big && !defined $why);
}

sub get_curl {
	my ($u, $tmp, $t, $left, $max) = @_;
	# Redirects followed as elfutils does, over HTTP(S) only.
	my ($rc, $out) = run_capped($left + 1, $max, 'curl', '-q', '-sS', '-L', '--max-redirs', 5,
		'--proto', '=http,https', '--proto-redir', '=http,https', ($max ? ('--max-filesize', $max) : ()),
		'-o', $tmp, '-w', '\n%{http_code}\n', '--connect-timeout', $t, '--speed-limit', 1,
		'--speed-time', $t, '--max-time', int($left) + 1, $u);
	return (0, 'not done within ' . int($left) . ' s') unless defined $rc;
	# 63: larger than --max-filesize said in advance; 153: SIGXFSZ.
	return (200, 'too large', 1) if $rc == 63 || $rc == 153;
	my ($code) = $out =~ /(\d{3})\s*\z/;
	my ($m) = $out =~ /curl: \(\d+\) ([^\n]*)/;
	return (($code // 0) + 0, $m // ($code ? "HTTP $code" : "curl exit status $rc"));
}

sub get_tiny {
	my ($u, $fh, $t, $left, $max) = @_;
	require HTTP::Tiny;
	my ($n, $over) = (0, 0);
	my $r = eval {
		local $SIG{ALRM} = sub { die 'not done within ' . int($left) . " s\n" };
		alarm(int($left) + 1);
		my $res = HTTP::Tiny->new(timeout => $t, agent => "$ME ", verify_SSL => 1, max_size => 1 << 20)->request('GET', $u,
			{ data_callback => sub {
				$n += length $_[0];
				if ($max && $n > $max) {
					$over = 1;
					die "too large\n";
				}
				print $fh $_[0];
			} });
		alarm 0;
		$res;
	};
	alarm 0;
	return (200, 'too large', 1) if $over;
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
