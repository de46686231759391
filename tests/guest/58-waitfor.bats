#!/usr/bin/env bats
# The wait-for graph beyond user-space locks: who holds up a thread that
# waits in the kernel.  tests/workload/offsample-waitfor.c makes one of
# each (a parent waiting for a child that waits for a lock, "any child"
# and process-group waits, page faults waiting for a thread that holds
# mmap_lock for writing, reads and writes waiting for a thread that holds
# a file's position lock, its inode's lock or its pipe's mutex while it
# sleeps in a fault on memory nobody serves (userfaultfd), threads
# waiting in a run queue; a mutex with one
# holder and seven waiters beside three spinners) and prints the
# id of every thread; the holders the module names are checked against
# those ids, the objects against what each waits on.  ps(1) is the
# independent witness of who is whose child and in which process group,
# /proc/locks of who holds a file lock, and procfs (every process's
# descriptors, /proc/net/{tcp,udp}[6]) of who holds a pipe's other end or
# a local connection's peer socket.
#
# Kernels: every test kernel (wait4, rw_semaphore and run-queue internals
# differ; on PREEMPT_RT kernel locks are rt_mutexes, kind rtmutex).

load lib

WF=$TOP/build/offsample-waitfor
SYM=$TOP/tools/offsample-symbolize
OFFS=$TOP/tools/offsample

# capture NAME [ARGS]: run the workload, count one generation of ~3 s
# while everything waits, keep it as NAME.stacks (symbolized) and the
# workload's "NAME TID" lines as NAME.out.
capture() {
	local d=$BATS_FILE_TMPDIR out pid
	out=$d/$1.out
	"$WF" "${@:2}" > "$out" 2>&1 3>&- &
	pid=$!
	echo "$pid" > "$d/$1.pid"
	wait_line "$out" '^ready$' 600 "$pid" > /dev/null
	ps -eo pid,ppid,pgid,comm,stat > "$d/$1.ps"
	cat /proc/locks > "$d/$1.locks"
	fdsnap > "$d/$1.fds"
	cat $P/drain > /dev/null
	sleep 3
	cat $P/drain > "$d/$1.raw"
	"$SYM" "$d/$1.raw" > "$d/$1.stacks"
	cp "$d/$1.raw" "$ARTIFACTS/waitfor-$1.stacks" 2>/dev/null || true
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}

# fdsnap: procfs's account of open files, one perl for the whole host:
# "fd PID FD TARGET FLAGS" for every descriptor of a process, as its
# first thread with it open shows it (a process whose main thread has
# exited shows none in /proc/PID/fd) (TARGET as readlink says,
# blanks as _; FLAGS octal, from fdinfo), "sys TID NR ARG0" for every
# thread's system call, and "PROTO LOCAL REMOTE INODE" for every TCP and
# UDP socket.
fdsnap() {
	perl -e '
		my %seen;
		for my $f (glob "/proc/[0-9]*/task/[0-9]*/fd/*") {
			my ($p, $tid, $fd) = $f =~ m{^/proc/(\d+)/task/(\d+)/fd/(\d+)$} or next;
			next if $seen{"$p $fd"}++;
			my $t = readlink($f) // next;
			$t =~ s/\s/_/g;
			open(my $h, "<", "/proc/$p/task/$tid/fdinfo/$fd") or next;
			my ($fl) = map { /^flags:\s+([0-7]+)/ ? $1 : () } <$h>;
			print "fd $p $fd $t ", $fl // "-", "\n";
		}
		for my $s (glob "/proc/[0-9]*/task/[0-9]*/syscall") {
			my ($p) = $s =~ m{^/proc/\d+/task/(\d+)/};
			open(my $h, "<", $s) or next;
			my @a = split " ", scalar(<$h>) // "";
			print "sys $p $a[0] ", hex($a[1] // 0), "\n" if @a > 1;
		}
		for my $proto (qw(tcp tcp6 udp udp6)) {
			open(my $h, "<", "/proc/net/$proto") or next;
			<$h>;
			while (<$h>) {
				my @c = split;
				print "$proto $c[1] $c[2] $c[9]\n";
			}
		}'
}

# fd_holders CAPTURE PID: the processes other than PID holding the other
# end of the descriptor PID's read or write (per its system call, as
# procfs said) is on: a pipe or FIFO's writers (PID reads) or readers (PID
# writes); a TCP or UDP socket's peer socket on this host (TCP: the socket
# whose addresses are PID's swapped; UDP: also a bound, unconnected one).
fd_holders() {
	awk -v pid="$2" '
		$1 == "sys" && $2 == pid { nr = $3; fd = $4 }
		$1 == "fd" { n++; p[n] = $2; f[n] = $3; t[n] = $4; fl[n] = $5 }
		$1 ~ /^(tcp|udp)6?$/ { m++; pr[m] = $1; lo[m] = $2; re[m] = $3; ino[m] = $4 }
		END {
			for (i = 1; i <= n; i++) if (p[i] == pid && f[i] == fd) want = t[i]
			# read(0) readv(19) recvfrom(45) recvmsg(47): a reader
			reading = nr == 0 || nr == 19 || nr == 45 || nr == 47
			if (want ~ /^socket:\[/) {
				s = substr(want, 9, length(want) - 9)
				for (k = 1; k <= m; k++) if (ino[k] == s) me = k
				for (k = 1; k <= m && me; k++)
					if (k != me && pr[k] == pr[me] && lo[k] == re[me] &&
					    (re[k] == lo[me] || (pr[k] ~ /^udp/ && re[k] ~ /^0+:0000$/)))
						want = "socket:[" ino[k] "]"
				if (want ~ "^socket:\\[" s "\\]$") exit
			}
			for (i = 1; i <= n; i++) {
				acc = substr(fl[i], length(fl[i])) % 4
				if (t[i] != want || p[i] == pid) continue
				if (want !~ /^socket:/ && (reading ? acc == 0 : acc == 1)) continue
				if (!(p[i] in seen)) { seen[p[i]]; print p[i] }
			}
		}' "$BATS_FILE_TMPDIR/$1.fds" | sort -n
}

setup_file() {
	load lib
	offs_load hz=20 key=tid
	capture wait
	capture spin --spin
	capture mixed --mixed
	cp $P/stats "$BATS_FILE_TMPDIR/stats"
}

teardown_file() {
	load lib
	local f
	for f in "$BATS_FILE_TMPDIR"/*.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
	done
	offs_unload
}

# tid_of CAPTURE NAME: the ids the workload printed for NAME.
tid_of() {
	awk -v n="$2" '$1 == n { print $2 }' "$BATS_FILE_TMPDIR/$1.out"
}

# edges CAPTURE WAITER_TID: that waiter's "# blocker:" lines as
# "kind object holder hstate hrec samples", sorted.
edges() {
	awk -F'\t' -v w="$2" '/^# blocker: / {
		delete e
		sub(/^# blocker: /, "")
		for (i = 1; i <= NF; i++) { split($i, kv, "="); e[kv[1]] = substr($i, length(kv[1]) + 2) }
		if (e["waiter"] == w) print e["kind"], e["object"], e["holder"], e["hstate"], e["hrec"], e["samples"]
	}' "$BATS_FILE_TMPDIR/$1.stacks" | sort
}

# rec CAPTURE ID: the record with that id (its position among the records).
rec() {
	awk -F'\t' -v id="$2" '!/^#/ && ++n == id' "$BATS_FILE_TMPDIR/$1.stacks"
}

ticks() {
	hdr_get ticks "$BATS_FILE_TMPDIR/$1.stacks"
}

@test "waitpid(child): the child is the holder, and the child's own lock wait continues the chain" {
	local child holder ticks hrec n
	child=$(tid_of wait wf-child)
	holder=$(tid_of wait wf-child-h)
	# ps agrees: wf-child is a child of wf-main's process.
	run -0 awk -v c="$child" -v p="$(tid_of wait wf-main)" '$1 == c && $2 == p' "$BATS_FILE_TMPDIR/wait.ps"
	[ -n "$output" ]
	ticks=$(ticks wait)
	[ "$ticks" -ge 20 ]
	run -0 edges wait "$(tid_of wait wf-waitpid)"
	assert_output --regexp "^child pid $child sampled [0-9]+ [0-9]+\$"
	read -r _ _ _ _ hrec n <<< "$output"
	[ "$n" -ge $((ticks - 1)) ] && [ "$n" -le "$ticks" ]
	# The holder's record: wf-child waiting for a lock ...
	run -0 rec wait "$hrec"
	assert_output --regexp "^[0-9]+	lock	S	[0-9]+	$child	[^	]*	wf-child	"
	# ... held by its thread wf-child-h, which sleeps.
	run -0 edges wait "$child"
	assert_output --regexp "^mutex 0x[0-9a-f]+ $holder sampled [0-9]+ [0-9]+\$"
	# The waiter's own record is a wait in wait4().
	run -0 awk -F'\t' -v w="$(tid_of wait wf-waitpid)" '!/^#/ && $5 == w' "$BATS_FILE_TMPDIR/wait.stacks"
	assert_output --partial 'do_wait'
}

@test "wait() for any child: every child is a holder, nobody else" {
	local w kids
	w=$(tid_of wait wf-anywait)
	kids=$(awk -v p="$w" '$2 == p { print $1 }' "$BATS_FILE_TMPDIR/wait.ps" | sort -n | tr '\n' ' ')
	[ "$kids" = "$(printf '%s\n' "$(tid_of wait wf-kid-a)" "$(tid_of wait wf-kid-b)" | sort -n | tr '\n' ' ')" ]
	run -0 edges wait "$w"
	[ "${#lines[@]}" -eq 2 ]
	assert_line --regexp "^child any $(tid_of wait wf-kid-a) sampled [0-9]+ [0-9]+\$"
	assert_line --regexp "^child any $(tid_of wait wf-kid-b) sampled [0-9]+ [0-9]+\$"
}

@test "waitpid(-pgid): only the children in that process group" {
	local w in
	w=$(tid_of wait wf-grpwait)
	in=$(tid_of wait wf-grp-in)
	# ps: wf-grp-in leads its own group, wf-grp-out is in its parent's.
	run -0 awk -v i="$in" '$1 == i { print $3 }' "$BATS_FILE_TMPDIR/wait.ps"
	assert_output "$in"
	run -0 edges wait "$w"
	assert_output --regexp "^child pgid $in sampled [0-9]+ [0-9]+\$"
	refute_output --partial " $(tid_of wait wf-grp-out) "
}

@test "a page fault waiting for mmap_lock: the thread that holds it for writing" {
	local w h kind n
	w=$(tid_of wait wf-mm-wait)
	h=$(tid_of wait wf-mm-hold)
	kind=rwsem
	case $(uname -r) in *-rt-*) kind=rtmutex ;; esac
	run -0 edges wait "$w"
	assert_line --regexp "^$kind mmap_lock $h (sampled|running) "
	# Every mmap_lock edge of the waiter names the writer, none anyone
	# else (a tick that found readers holding it, or its wait list busy,
	# names nobody: holder ?).
	run -0 awk -v h="$h" '$2 == "mmap_lock" && $3 != h && $3 != "?"' <<< "$output"
	assert_output ''
	n=$(edges wait "$w" | awk '$2 == "mmap_lock" { n += $6 } END { print n + 0 }')
	[ "$n" -ge 3 ]
}

# syscall_of CAPTURE TID: "NR ARG0" of that thread's system call, as
# procfs said at the capture.
syscall_of() {
	awk -v t="$2" '$1 == "sys" && $2 == t { print $3, $4 }' "$BATS_FILE_TMPDIR/$1.fds"
}

@test "a file's kernel locks: f_pos_lock, i_rwsem, a pipe's mutex, a socket's iolock name the thread that holds them" {
	local p n kind obj hnr wnr w h wsys hsys fd hrec
	# Each holder sleeps in a fault on memory nobody serves (userfaultfd)
	# inside its read(), pwrite() or write(); its waiter calls the same
	# on the same open file (read: f_pos_lock; pwrite: the inode's
	# i_rwsem; read of a UNIX socket: its iolock) or reads the pipe it
	# writes to (the pipe's mutex).
	for p in "pos kmutex f_pos_lock 0 0" "ino rwsem i_rwsem 18 18" "pmx kmutex pipe_mutex 1 0" \
		"uio kmutex unix_iolock 0 0"; do
		read -r n kind obj hnr wnr <<< "$p"
		case $(uname -r) in *-rt-*) kind=rtmutex ;; esac
		w=$(tid_of wait "wf-$n-w")
		h=$(tid_of wait "wf-$n-h")
		# procfs: the holder sleeps in the fault, both in the calls
		# named (read 0, write 1, pwrite64 18), on the descriptors.
		wsys=$(syscall_of wait "$w")
		hsys=$(syscall_of wait "$h")
		echo "wf-$n: waiter $w ($wsys), holder $h ($hsys)"
		[ "${wsys% *}" = "$wnr" ] && [ "${hsys% *}" = "$hnr" ]
		fd=${wsys#* }
		[ "$n" = pmx ] || [ "${hsys#* }" = "$fd" ]
		run -0 edges wait "$w"
		echo "$output"
		# One edge, the whole capture long: that lock, that holder.
		[ "${#lines[@]}" -eq 1 ]
		assert_output --regexp "^$kind $obj:fd$fd $h sampled [0-9]+ [0-9]+\$"
		[ "${output##* }" -ge $(($(ticks wait) - 1)) ]
		# The holder's record: in the fault, from that system call.
		read -r _ _ _ _ hrec _ <<< "$output"
		run -0 rec wait "$hrec"
		assert_output --regexp "^[0-9]+	[a-z]+	[SD]	[0-9]+	$h	[^	]*	wf-$n-h	[^	]*handle_userfault"
	done
}

@test "threads waiting in a run queue wait for the thread running on that CPU" {
	local spin tids n bad
	spin=$(tid_of spin wf-spin | tr '\n' ' ')
	[ "$(wc -w <<< "$spin")" -eq 3 ]
	tids=" $spin"
	n=0
	bad=0
	for t in $spin; do
		while read -r kind obj holder hstate _ samples; do
			[ "$kind" = cpu ] || continue
			# The spinners run on CPU 1 only.
			[ "$obj" = cpu1 ] || bad=$((bad + 1))
			case $tids in
			*" $holder "*) n=$((n + samples)) ;;
			esac
			[ "$holder" != "$t" ] || bad=$((bad + 1))
		done < <(edges spin "$t")
	done
	[ "$bad" -eq 0 ]
	# Two of three spinners wait at any time, for about as many ticks.
	[ "$n" -ge "$(ticks spin)" ]
}

@test "UNIX stream socket: each end waits for the process at the other; two that wait for each other are a cycle" {
	local srv cli
	srv=$(tid_of wait wf-usrv)
	cli=$(tid_of wait wf-ucli)
	run -0 edges wait "$cli"
	assert_line --regexp "^unix fd[0-9]+ $srv sampled [0-9]+ [0-9]+\$"
	run -0 edges wait "$srv"
	assert_line --regexp "^unix fd[0-9]+ $cli sampled [0-9]+ [0-9]+\$"
	# A deadlock of two processes: the chain closes, the picture is red.
	run -0 "$OFFS" blockers --no-symbolize "$BATS_FILE_TMPDIR/wait.stacks"
	assert_line --regexp "^samples=[0-9]+ waiter=$cli .* kind=unix object=fd[0-9]+ holder=$srv hname=wf-usrv hwhat=[a-z]+ chain=$cli>$srv>$cli>cycle "
	run -0 "$OFFS" blockers --dot --no-symbolize "$BATS_FILE_TMPDIR/wait.stacks"
	assert_line --regexp "^	\"t$cli\" -> \"t$srv\" \\[label=\"unix [0-9.]+ s\", color=\"#c0392b\""
}

# locks_holder PID: the process holding the lock that PID's blocked
# request waits for, as /proc/locks says ("N: -> ..." under lock N).
locks_holder() {
	awk -v p="$1" '$2 == "->" && $6 == p { want = $1 }
		$2 != "->" { holder[$1] = $5 }
		END { if (want != "") print holder[want] }' "$BATS_FILE_TMPDIR/wait.locks"
}

@test "file locks (flock, POSIX, OFD): the process holding the conflicting lock, as /proc/locks says" {
	local flk_h flk_w plk_h plk_w ofd_w
	flk_h=$(tid_of wait wf-flk-h)
	flk_w=$(tid_of wait wf-flk-w)
	plk_h=$(tid_of wait wf-plk-h)
	plk_w=$(tid_of wait wf-plk-w)
	ofd_w=$(tid_of wait wf-ofd-w)
	# The kernel's own account: who blocks whom.
	[ "$(locks_holder "$flk_w")" = "$flk_h" ]
	[ "$(locks_holder "$plk_w")" = "$plk_h" ]
	run -0 edges wait "$flk_w"
	assert_output --regexp "^flock fd[0-9]+ $flk_h sampled [0-9]+ [0-9]+\$"
	run -0 edges wait "$plk_w"
	assert_output --regexp "^posix fd[0-9]+ $plk_h sampled [0-9]+ [0-9]+\$"
	# An OFD read lock on bytes 0-9 conflicts with the POSIX write lock
	# on 0-99 (/proc/locks numbers OFD requests -1: no pid to compare).
	run -0 edges wait "$ofd_w"
	assert_output --regexp "^ofd fd[0-9]+ $plk_h sampled [0-9]+ [0-9]+\$"
	# wf-plk-x's range did not conflict: it holds its lock and sleeps.
	run -0 edges wait "$(tid_of wait wf-plk-x)"
	assert_output ''
}

# file_edges CAPTURE WAITER KIND: the holders of WAITER's KIND edges, after
# checking every such edge is on the descriptor procfs says it waits on.
file_edges() {
	local fd
	fd=$(awk -v w="$2" '$1 == "sys" && $2 == w { print $4 }' "$BATS_FILE_TMPDIR/$1.fds")
	[ -n "$fd" ] || return 1
	edges "$1" "$2" | awk -v k="$3" -v o="fd$fd" '$1 == k && $2 != o { bad = 1 } $1 == k { print $3 } END { exit bad }' | sort -n
}

@test "a pipeline whose last stage sleeps: each stage waits for the next (procfs's readers), a chain to the sleeper" {
	local a b c
	a=$(tid_of wait wf-pipe-a)
	b=$(tid_of wait wf-pipe-b)
	c=$(tid_of wait wf-pipe-c)
	# procfs: the only other process holding a's and b's pipes for reading.
	[ "$(fd_holders wait "$a")" = "$b" ]
	[ "$(fd_holders wait "$b")" = "$c" ]
	run -0 file_edges wait "$a" pipe
	assert_output "$b"
	run -0 file_edges wait "$b" pipe
	assert_output "$c"
	run -0 edges wait "$a"
	assert_output --regexp "^pipe fd[0-9]+ $b sampled [0-9]+ [0-9]+\$"
	# The chain ends at the sleeping last stage.
	run -0 "$OFFS" blockers --no-symbolize "$BATS_FILE_TMPDIR/wait.stacks"
	assert_line --regexp "^samples=[0-9]+ waiter=$a .* kind=pipe object=fd[0-9]+ holder=$b .* chain=$a>$b>$c "
}

@test "a FIFO's reader waits for the process holding it open for writing" {
	local r w
	r=$(tid_of wait wf-fifo-r)
	w=$(tid_of wait wf-fifo-w)
	[ "$(fd_holders wait "$r")" = "$w" ]
	run -0 file_edges wait "$r" fifo
	assert_output "$w"
	# The writer sleeps in pause(): no edge.
	run -0 edges wait "$w"
	assert_output ''
}

@test "a pipe's other end held by a process whose main thread has exited: that process, found through its other thread" {
	local r z
	r=$(tid_of wait wf-zl-r)
	z=$(tid_of wait wf-zl)
	# procfs: wf-zl's main thread is a zombie (its /proc/PID/fd is
	# empty); its thread wf-zl-t holds the write end.
	run -0 awk -v z="$z" '$1 == z { print $5 }' "$BATS_FILE_TMPDIR/wait.ps"
	assert_output --regexp '^Z'
	[ "$(fd_holders wait "$r")" = "$z" ]
	run -0 file_edges wait "$r" pipe
	assert_output "$z"
}

# grow_window NAME: one generation of ~1.5 s from now, symbolized, as
# NAME.stacks in the test's directory, and its blocker_files_kept.
grow_window() {
	local d=$BATS_TEST_TMPDIR k0
	k0=$(stat_get blocker_files_kept)
	cat $P/drain > /dev/null
	sleep 1.5
	cat $P/drain > "$d/$1.raw"
	"$SYM" "$d/$1.raw" > "$d/$1.stacks"
	echo $(($(stat_get blocker_files_kept) - k0)) > "$d/$1.kept"
}

# grow_edges NAME WAITER: "holder samples ticks" for each of its pipe edges.
grow_edges() {
	local f=$BATS_TEST_TMPDIR/$1.stacks
	awk -F'\t' -v w="$2" -v t="$(hdr_get ticks "$f")" '/^# blocker: / {
		delete e
		sub(/^# blocker: /, "")
		for (i = 1; i <= NF; i++) { split($i, kv, "="); e[kv[1]] = substr($i, length(kv[1]) + 2) }
		if (e["waiter"] == w && e["kind"] == "pipe") print e["holder"], e["samples"], t
	}' "$f" | sort -n
}

# The memo of the holders found (kfile.c) is believed only while nothing
# else holds the other end: a process forked with it is named at the
# very next tick, one that closed it no more.
@test "a pipe's holders change while its reader waits: each tick names those of that tick" {
	local d=$BATS_TEST_TMPDIR r w w2
	"$WF" --grow > "$d/grow.out" 2>&1 3>&- &
	echo $! > "$BATS_FILE_TMPDIR/grow.pid"
	wait_line "$d/grow.out" '^ready$' 600 $! > /dev/null
	r=$(awk '$1 == "wf-gr-r" { print $2 }' "$d/grow.out")
	w=$(awk '$1 == "wf-gr-w" { print $2 }' "$d/grow.out")
	# Only wf-gr-w holds the write end: its edge at every tick, from the
	# memo after the first search.
	grow_window one
	run -0 grow_edges one "$r"
	assert_output --regexp "^$w [0-9]+ [0-9]+\$"
	read -r _ n t <<< "$output"
	[ "$n" -ge $((t - 1)) ] && [ "$t" -ge 20 ]
	[ "$(cat "$d/one.kept")" -ge $((t - 2)) ]
	# It forks wf-gr-w2, which holds the end too: both at every tick.
	kill -USR1 "$w"
	w2=$(wait_line "$d/grow.out" '^wf-gr-w2 ' 100 | awk '{ print $2 }')
	[ -n "$w2" ]
	grow_window two
	run -0 grow_edges two "$r"
	echo "$output"
	assert_equal "$(awk '{ printf "%s ", $1 }' <<< "$output")" \
		"$(printf '%s\n' "$w" "$w2" | sort -n | tr '\n' ' ')"
	# Neither missed more than the tick the window began in.
	run -0 awk '$2 < $3 - 1' <<< "$output"
	assert_output ''
	# wf-gr-w closes its end: wf-gr-w2 alone.
	kill -USR1 "$w"
	wait_line "$d/grow.out" '^closed$' 100 > /dev/null
	grow_window three
	run -0 grow_edges three "$r"
	assert_output --regexp "^$w2 [0-9]+ [0-9]+\$"
	read -r _ n t <<< "$output"
	[ "$n" -ge $((t - 1)) ]
	[ "$(cat "$d/three.kept")" -ge $((t - 2)) ]
}

@test "TCP over 127.0.0.1 and ::1, connected UDP: a client waits for the process holding the peer socket" {
	local n srv cli
	for n in t t6 d; do
		srv=$(tid_of wait "wf-${n%6}srv${n#?}")
		cli=$(tid_of wait "wf-${n%6}cli${n#?}")
		[ -n "$srv" ] && [ -n "$cli" ]
		# /proc/net says who holds the peer socket.
		[ "$(fd_holders wait "$cli")" = "$srv" ]
		run -0 file_edges wait "$cli" "$([ "$n" = d ] && echo udp || echo tcp)"
		assert_output "$srv"
	done
}

@test "a wait that names no holder says why: a pipe only its own process holds (nobody), UDP to a port nobody has (nopeer)" {
	local s f
	s=$(tid_of wait wf-pipe-self)
	f=$(tid_of wait wf-dfar)
	# procfs: nobody else holds the pipe's write end; no socket is the peer.
	[ "$(fd_holders wait "$s")" = "" ]
	[ "$(fd_holders wait "$f")" = "" ]
	run -0 edges wait "$s"
	assert_output --regexp "^pipe fd[0-9]+ \? unknown - [0-9]+\$"
	run -0 grep -E "^# blocker: .*	waiter=$s	.*	holder=\?	hpid=\?	.*	hstate=unknown	hrec=-	why=nobody\$" "$BATS_FILE_TMPDIR/wait.stacks"
	run -0 edges wait "$f"
	assert_output --regexp "^udp fd[0-9]+ \? unknown - [0-9]+\$"
	run -0 grep -E "^# blocker: .*	waiter=$f	.*	why=nopeer\$" "$BATS_FILE_TMPDIR/wait.stacks"
	# offsample blockers ends the chain there, with the reason.
	run -0 "$OFFS" blockers --no-symbolize "$BATS_FILE_TMPDIR/wait.stacks"
	assert_line --regexp "^samples=[0-9]+ waiter=$s .* kind=pipe object=fd[0-9]+ holder=\\? hname=- hwhat=unknown:nobody chain=$s>\\? root=\\? "
}

@test "the statistics count the lookups; offsample blockers shows the chain" {
	run -0 stat_get blocker_found "$BATS_FILE_TMPDIR/stats"
	[ "$output" -gt 0 ]
	# The descriptor scans for pipe and socket ends, within their bound.
	run -0 stat_get blocker_fds "$BATS_FILE_TMPDIR/stats"
	[ "$output" -gt 0 ]
	run -0 stat_get blocker_fds_cut "$BATS_FILE_TMPDIR/stats"
	assert_output 0
	run -0 "$OFFS" blockers "$BATS_FILE_TMPDIR/wait.stacks"
	assert_output --partial 'wf-waitpid'
	assert_output --partial 'wf-child-h'
}

@test "offsample critical: the lock holder's hot section outweighs the spinners (waits caused)" {
	local out
	# weight FUNCTION: the weight of the stacks through it (what a flame
	# graph of the same weights shows as its width).
	weight() {
		awk -F'\t' -v f="$1" '{ n = split($2, fr, ";"); for (i = 1; i <= n; i++) if (fr[i] == f) { t += $1; break } }
			END { printf "%d\n", t }' <<< "$out"
	}
	out=$("$OFFS" critical --no-symbolize "$BATS_FILE_TMPDIR/mixed.stacks")
	echo "both: hot $(weight wf_hot_section), spinners $(weight wf_par_spin)"
	[ "$(weight wf_hot_section)" -gt "$(weight wf_par_spin)" ]
	out=$("$OFFS" critical --by waits --no-symbolize "$BATS_FILE_TMPDIR/mixed.stacks")
	echo "waits: hot $(weight wf_hot_section), spinners $(weight wf_par_spin)"
	[ "$(weight wf_hot_section)" -gt "$(weight wf_par_spin)" ]
	# The seven waiters' samples are on the section: at least a tick's
	# worth of waiting each per four ticks (they wait all the time; the
	# holder, preempted, passes some on to the spinners).
	[ "$(weight wf_hot_section)" -ge $((7 * $(ticks mixed) / 4)) ]
	# What GAPP alone says, for the record (not asserted: its order
	# depends on how the four runnable threads shared two CPUs).
	out=$("$OFFS" critical --by gapp --no-symbolize "$BATS_FILE_TMPDIR/mixed.stacks")
	echo "# gapp: hot $(weight wf_hot_section), spinners $(weight wf_par_spin)" >&3
	# The folded form is flamegraph.pl's input.
	run -0 "$OFFS" critical --folded --no-symbolize "$BATS_FILE_TMPDIR/mixed.stacks"
	run -0 grep -cvE '^.+ [0-9]+(\.[0-9]+)?$' <<< "$output" || true
	assert_output 0
}
