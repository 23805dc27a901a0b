# tests/bpftrace/bt_lib.sh: helpers for the bpftrace script tests (sourced by
# tests/bpftrace/*.icount.sh, in the guest). Each test starts a script from
# bpf/bpftrace/ with tool_start, runs tests/bin/bt_munmap next to it
# (PID-filtered, iterations started by the test: bt_target, bt_go), stops
# the script with tool_stop (repeated SIGINT, tests/lib.sh) and checks what
# it printed. lib.sh stops a script still running when the file exits.
#
# Under icount (sleep=off) guest time jumps to the next timer deadline
# whenever the vCPU idles, e.g. while it waits for the host's 9p answer to
# an exec or a file write: 50 execs of /bin/true "took" 327 s of guest
# time, 50 cats of a checkout file 1250 s (scripts/vm-run --icount --cpus
# 1, nothing else pending); one dirname at the start of a file 780 s. With
# only far timers pending (the file's 900 s timeout, bpftrace_stop's
# 300 s) a few execs would eat them. So the first thing here, before any
# exec (the files source this with ${0%/*}, not dirname): a ticker that
# waits 20 ms at a time (bash's read -t on a pipe that never gets data: no
# exec, no I/O) keeps a deadline near, so an idle wait costs at most 20 ms
# of guest time. It is stopped while a workload iteration runs (bt_go ..
# bt_next), so that it takes no turn on the one vCPU inside a measured
# munmap.
( exec {t}<> <(:); while :; do read -r -t 0.02 -u "$t" _; done ) &
BT_TICK=$!
. "${BASH_SOURCE[0]%/*}/../lib.sh"
at_exit "kill -KILL $BT_TICK 2>/dev/null"
BT_DIR=$TOP/bpf/bpftrace
BT_W=$TESTBIN/bt_munmap
BT_CHECK="$PY $TOP/tests/bpftrace/bt_check.py"

# offsetof(struct mm_struct, mmap_lock) from the running kernel's BTF.
bt_mmoff() {
	pahole -C mm_struct /sys/kernel/btf/vmlinux 2>/dev/null |
		awk '/struct rw_semaphore[ \t]+mmap_lock;/ { sub(/.*\/\*[ \t]*/, ""); print $1; exit }'
}

# bt_target OUT BT_MUNMAP-ARGS...: start bt_munmap -g GO-FIFO in the
# background with its output through a FIFO that this shell reads (bt_next
# copies it to OUT), until it is ready for iteration 0. No polling: the
# workload blocks on the go FIFO, this shell on its output. Sets BT_WL (the
# job, for wait/kill) and BT_TPID (the pid it reports, for PID filters).
# Returns 1 if it never got ready, with BT_WHY saying what it printed.
bt_target() {
	BT_LOG=$1 BT_GO=/tmp/bt-go.$$ BT_OUTF=/tmp/bt-out.$$
	shift
	rm -f "$BT_GO" "$BT_OUTF"
	mkfifo "$BT_GO" "$BT_OUTF" || { BT_WHY="mkfifo $BT_GO $BT_OUTF failed"; return 1; }
	: >"$BT_LOG"
	"$BT_W" "$@" -g "$BT_GO" >"$BT_OUTF" 2>&1 &
	BT_WL=$!
	at_exit "kill $BT_WL 2>/dev/null"
	exec {BT_FD}<"$BT_OUTF"
	if ! bt_next 0; then
		BT_WHY="bt_munmap -g did not get ready: $(tr '\n' ' ' <"$BT_LOG")"
		return 1
	fi
	BT_TPID=$(sed -n 's/^ready pid=\([0-9]*\).*/\1/p' "$BT_LOG" | head -n1)
}

# bt_next I: copy the workload's lines to its OUT until it is ready for
# iteration I (1 if it ended first); restarts the ticker.
bt_next() {
	local line rc=1
	while IFS= read -r line <&"$BT_FD"; do
		printf '%s\n' "$line" >>"$BT_LOG"
		if [[ $line == "ready pid="*" iter=$1" ]]; then
			rc=0
			break
		fi
	done
	kill -CONT "$BT_TICK" 2>/dev/null
	return $rc
}

# bt_go: start the iteration the workload is ready for (the ticker stops
# until bt_next or bt_end).
bt_go() {
	kill -STOP "$BT_TICK" 2>/dev/null
	printf x >"$BT_GO"
}

# bt_end: copy the rest of the workload's output, wait for it to exit;
# returns its exit status.
bt_end() {
	local line rc
	while IFS= read -r line <&"$BT_FD"; do printf '%s\n' "$line" >>"$BT_LOG"; done
	exec {BT_FD}<&-
	kill -CONT "$BT_TICK" 2>/dev/null
	wait "$BT_WL"
	rc=$?
	rm -f "$BT_GO" "$BT_OUTF"
	return $rc
}

# bt_start SCRIPT OUT PID MMOFF: start bpf/bpftrace/SCRIPT.bt as the tool
# "bpftrace-SCRIPT" and wait until it has attached (its BEGIN line; 10-30 s
# under TCG). Its output goes to /tmp (tmpfs) while it runs, and is copied
# to OUT here and by bt_stop: printed into a 9p file, its maps took long
# enough at exit (each line a round trip to the host) for the repeated
# SIGINT of tool_stop to land in the middle, and bpftrace 0.17 restores
# SIGINT's default action before it prints them: it died half-way, with
# two histograms missing (1 of 12 stops in the first icount runs).
bt_start() {
	local t0=$SECONDS rc live=/tmp/bt-$1.$$.out
	tool_start "bpftrace-$1" "$live" "$live" bpftrace -B line "$BT_DIR/$1.bt" "$3" "$4"
	rc=$?
	cp "$live" "$2"
	echo "# bpftrace $1: attach took $((SECONDS - t0)) s (guest clock)" >&2
	return $rc
}

# bt_stop SCRIPT OUT: stop it (tool_stop: SIGINT, repeated; killed after
# 300 s), copy its output to OUT and check, as one check, that it exited
# and printed its maps (bpftrace prints them after detaching; a killed one
# prints none). Returns 1 if not.
bt_stop() {
	local t0=$SECONDS live=/tmp/bt-$1.$$.out
	tool_stop "bpftrace-$1"
	cp "$live" "$2"
	echo "# bpftrace $1: stop took $((SECONDS - t0)) s, $BPFTRACE_SIGINTS SIGINT(s) (guest clock)" >&2
	if [ "$TOOL_RC" = 0 ] && grep -q '^@' "$2"; then
		ok "$1.bt exited on SIGINT within 300 s and printed its maps"
		return 0
	fi
	fail "$1.bt exited on SIGINT within 300 s and printed its maps: exit ${TOOL_RC:-none}, $(grep -c '^@' "$2") map lines in $2"
	return 1
}

# hist_count FILE MAP: sum of the counts of a bpftrace hist() printed as @MAP
# ("@MAP: " with a trailing space, then "[lo, hi)   N |@@@|" lines).
hist_count() {
	awk -v m="@$2:" '$1 == m { on = 1; next } on && /^\[/ { sub(/^\[[^\])]*[\])][ \t]*/, ""); n += $1; next } on { on = 0 } END { print n + 0 }' "$1"
}

# map_sum FILE MAP: sum of the values of every @MAP[...]: V line.
map_sum() { awk -v m="@$2[" 'index($0, m) == 1 { n += $NF } END { print n + 0 }' "$1"; }

# stat_count FILE MAP KEY: the count of "@MAP[KEY]: count N, average ...".
stat_count() { sed -n "s/^@$2\[$3\]: count \([0-9]*\),.*/\1/p" "$1" | head -n1; }
