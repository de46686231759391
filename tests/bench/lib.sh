# SPDX-License-Identifier: GPL-2.0
# Helpers of the benchmark scripts that run in the guest, as root, with the
# module: tests/bench/bench-inner.sh and tests/bench/insnprof-guest.sh.
# The caller defines P (/proc/offsample) and log MESSAGE.

stat_get() { awk -v k="$1" '$1 == k { print $2 }' $P/stats; }

# wait_ticks N TIMEOUT_S: until the module has run N ticks (0 on success).
wait_ticks() {
	local want=$1 limit=$(($(date +%s) + $2)) t
	while :; do
		t=$(stat_get ticks)
		[ "${t:-0}" -ge "$want" ] && return 0
		[ "$(date +%s)" -ge "$limit" ] && { log "timeout waiting for $want ticks (at $t)"; return 1; }
		sleep 0.2
	done
}

# wait_cfi TIMEOUT_S: until no .eh_frame table is queued or being built,
# then two more ticks (so that every thread was captured with them).
wait_cfi() {
	local limit=$(($(date +%s) + $1)) t
	while [ "$(stat_get cfi_builds_pending)" != 0 ]; do
		[ "$(date +%s)" -ge "$limit" ] && { log "timeout waiting for cfi builds"; return 1; }
		sleep 0.2
	done
	t=$(stat_get ticks)
	wait_ticks $((t + 2)) 600
}

# start_ready OUTFILE LABEL COMMAND...: COMMAND in the background, until
# it prints a line starting with "ready" (10 minutes at most); its pid in
# ready_pid.
start_ready() {
	local f=$1 label=$2 i
	shift 2
	: > "$f"
	"$@" > "$f" 2>&1 &
	ready_pid=$!
	for i in $(seq 1 3000); do
		grep -q '^ready' "$f" && { log "$label: $(head -n1 "$f") (pid $ready_pid)"; return 0; }
		kill -0 $ready_pid 2>/dev/null || break
		sleep 0.2
	done
	log "$label did not start: $(cat "$f")"
	return 1
}
