#!/usr/bin/env bash
# kernels: debian-6.1 debian-6.12
# mmlockstat_drops.icount.sh: nothing is lost silently (issue 14, item 1).
# Each cause of loss the tool can be driven into is forced here, and its
# count in the JSON `drops` object checked, next to a control that runs the
# same workload without the cause and counts none.
#
# The workload: mmls_hold's main thread holds its mmap_lock for write for
# 20 ms through the calibration module; 2 ms in, 16 threads (-b 16:2000)
# call brk(0): 16 tasks inside the brk syscall at once, each waiting for
# the lock (down_write_killable, then lock:contention_begin).
# - map full: with --map-entries 1 the map of write acquisitions and the
#   map of waits hold one entry each: the first brk thread gets them, the
#   other 15 are refused twice (>= 30 map_full; other tasks of the guest
#   may add more, never less); one write wait is recorded, not 16, and the
#   15 waits whose start was refused end without a start (>= 15). The text
#   output says so in its warning line. With -s the stack map, of one
#   entry too, keeps the first stack: the calibration hold and the brk
#   wait have different stacks, so at least one top entry has none, and
#   each such entry is counted in stacks_lost (the text output warns).
# - kprobe misses: default mode ends downgraded read phases at the return
#   of __x64_sys_brk (a kretprobe). A kretprobe has max(10, 2 x possible
#   CPUs) instances: with 16 tasks inside brk at once the kernel skips the
#   rest, and reports how many through bpf_link_info from 6.7 on (Debian's
#   6.12): 16 - 10 = 6 with the guest's one CPU. 6.1 does not report them:
#   null, never a made-up 0.
# - ring buffer full: with -n 0 every hold crosses the ring buffer (no
#   top-N threshold). The tool is stopped (SIGSTOP) while mmls_hold calls
#   brk(0) 4000 times: the 256 KiB ring takes 262144 / 200 = 1310 events
#   (struct event is 192 bytes, plus the 8-byte record header), so exactly
#   4000 - 1310 = 2690 are lost; the histogram still counts all 4000. The
#   control (400 calls) loses none.
# - recursion misses: with --kprobes --full the tool's programs on the
#   mmap_lock tracepoints run through perf, under the per-CPU guard that
#   kprobe and perf programs share (bpf_prog_active): a tracepoint fired
#   while another such program runs on the CPU does not run the tool's
#   program. tests/bin/bpf_recurse attaches a kprobe program to getppid()
#   that takes its own process's mmap_lock for read (bpf_find_vma()), and
#   calls getppid() REC_N times: each take fires mmap_lock_start_locking,
#   _acquire_returned and _released under the guard, 3 x REC_N skipped
#   runs of the tool's programs, and the release hits the tool's kprobe on
#   up_read inside bpf_recurse's kprobe, which kprobes skip (REC_N kprobe
#   misses). From 6.7 on (Debian's 6.12) the kernel counts both: exactly
#   3 x REC_N recursion_misses and REC_N kprobe_misses. 6.1 skips them
#   without counting: 0 and null, never a made-up figure. The control (the
#   same calls, no program) counts none.
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mmls_lib.sh"
mmls_icount_setup mmlockstat_drops

NBRK=16 RING_N=4000 RING_CTRL=400 REC_N=1000
RING_CAP=$((262144 / 200))
N_FULL=4 N_TEXT=2 N_CTRL=4 N_RING=2 N_RING_CTRL=2 N_REC=3 N_REC_CTRL=2 N_SCHEMA=1
plan $((N_FULL + N_TEXT + N_CTRL + N_RING + N_RING_CTRL + N_REC + N_REC_CTRL + N_SCHEMA))
[ -x "$TOOL" ] || abort "bpf/mmlockstat is built (make tools)"
[ -x "$HOLD" ] && [ -x "$TESTBIN/bpf_recurse" ] && [ -f "$TESTBIN/bpf_recurse.bpf.o" ] ||
	abort "tests/bin/mmls_hold and bpf_recurse are built (make -C tests/tools)"
if [ ! -d /sys/kernel/debug/test_mmap_lock ] &&
   ! modprobe test_mmap_lock 2>"$out/modprobe.err"; then
	abort "modprobe test_mmap_lock: $(head -n1 "$out/modprobe.err")"
fi

STORM=(-b "$NBRK:2000" write:20000)

# --- map full ----------------------------------------------------------------
if mmls_case full $N_FULL "-n 64 -s --map-entries 1" "${STORM[@]}"; then
	check_range "full: acquisitions and waits refused by the full maps: drops.map_full >= 2 x ($NBRK - 1)" \
		"$(get full 'o["drops"]["map_full"]')" $((2 * (NBRK - 1))) 1000000
	check_eq "full: only the wait that found room is recorded: write_wait count" \
		"$(get full 'o["histograms"]["write_wait"]["count"]')" 1
	check_range "full: the refused waits end without a start: drops.ended_without_start >= $NBRK - 1" \
		"$(get full 'o["drops"]["ended_without_start"]')" $((NBRK - 1)) 1000000
	nostack=$(get full 'len([e for e in o["top_holds"] + o["top_waits"] if not e.get("stack")])')
	lost=$(get full 'o.get("stacks_lost")')
	check "full: stacks the one-entry stack map refused are counted: $nostack top entries without a stack, stacks_lost $lost" \
		test "$nostack" -ge 1 -a "$lost" -ge "$nostack"
fi

# --- map full, in the text output --------------------------------------------
if MMLS_TEXT=1 mmls_run text "-s --map-entries 1" "${STORM[@]}"; then
	check "text: a warning line counts the map-full losses ($(grep -m1 '^warning: not recorded' "$out/text.out"))" \
		grep -Eq '^warning: not recorded: ([0-9]+ [a-z ]+, )*[0-9]+ map full \(raise --map-entries\)' "$out/text.out"
	check "text: a warning line counts the stacks lost ($(grep -m1 '^warning: .* stack' "$out/text.out"))" \
		grep -Eq '^warning: [1-9][0-9]* kernel stack\(s\) not recorded' "$out/text.out"
else
	fail_n $N_TEXT "text: mmlockstat ran (exit ${MMLS_RC:-none}): $(tail -n 2 "$out/text.err" | tr '\n' ' ')"
fi

# --- the control: room for all, and the kretprobe's misses -------------------
# maxactive of a kretprobe the perf PMU registers: max(10, 2 x possible
# CPUs) (kernel/kprobes.c, register_kretprobe())
ncpu=$(($(sed 's/.*-//' /sys/devices/system/cpu/possible) + 1))
maxactive=$((2 * ncpu > 10 ? 2 * ncpu : 10))
IFS=. read -r kmaj kmin _ <<<"$(uname -r)"
if [ "$kmaj" -gt 6 ] || { [ "$kmaj" = 6 ] && [ "${kmin%%[!0-9]*}" -ge 7 ]; }; then
	want_miss=$((NBRK > maxactive ? NBRK - maxactive : 0))
else
	want_miss=None
fi
if mmls_case ctrl $N_CTRL "-n 64 -s" "${STORM[@]}"; then
	check_eq "ctrl: nothing refused: drops map_full, map_busy, ringbuf_full" \
		"$(get ctrl '[o["drops"][k] for k in ("map_full", "map_busy", "ringbuf_full")]')" "[0, 0, 0]"
	check_eq "ctrl: every brk thread's wait recorded: write_wait count" \
		"$(get ctrl 'o["histograms"]["write_wait"]["count"]')" "$NBRK"
	check_eq "ctrl: $NBRK tasks in brk at once, $maxactive kretprobe instances: drops.kprobe_misses (kernel $(uname -r); None: not reported before 6.7)" \
		"$(get ctrl 'o["drops"]["kprobe_misses"]')" "$want_miss"
	check_eq "ctrl: every stack kept: stacks_lost, top entries without a stack" \
		"$(get ctrl '[o.get("stacks_lost"), len([e for e in o["top_holds"] + o["top_waits"] if not e.get("stack")])]')" "[0, 0]"
fi

# --- ring buffer full --------------------------------------------------------
# ring_run NAME CALLS: mmlockstat -j -n 0 -p mmls_hold, stopped while
# mmls_hold makes CALLS brk(0) calls; 0 if both ran.
ring_run() {
	local name=$1 calls=$2 hpid tpid
	if ! gated_start "$name" "$HOLD" -g "brk:$calls"; then
		echo "mmls_hold ready: $(head -n 2 "$out/$name.hold.err")" >"$out/$name.why"
		return 1
	fi
	hpid=$GATED_PID
	if ! tool_start "$name" "$out/$name.json" "$out/$name.err" "$TOOL" -p "$hpid" -j -n 0; then
		gated_abort
		echo "mmlockstat attached: $(tail -n 2 "$out/$name.err")" >"$out/$name.why"
		return 1
	fi
	tpid=${TOOL_PIDS[$name]}
	kill -STOP "$tpid"
	gated_go
	wait "$hpid"
	kill -CONT "$tpid"
	tool_stop "$name"
	[ "$TOOL_RC" = 0 ] && return 0
	echo "mmlockstat exit $TOOL_RC: $(tail -n 2 "$out/$name.err")" >"$out/$name.why"
	return 1
}

if ring_run ring $RING_N; then
	check_eq "ring: $RING_N holds while the reader was stopped, $RING_CAP fit: drops.ringbuf_full" \
		"$(get ring 'o["drops"]["ringbuf_full"]')" $((RING_N - RING_CAP))
	check_eq "ring: the histogram lost none: write_hold count" \
		"$(get ring 'o["histograms"]["write_hold"]["count"]')" $RING_N
else
	fail_n $N_RING "ring: ran: $(cat "$out/ring.why")"
fi
if ring_run ringctrl $RING_CTRL; then
	check_eq "ringctrl: $RING_CTRL holds fit: drops.ringbuf_full" \
		"$(get ringctrl 'o["drops"]["ringbuf_full"]')" 0
	check_eq "ringctrl: write_hold count" \
		"$(get ringctrl 'o["histograms"]["write_hold"]["count"]')" $RING_CTRL
else
	fail_n $N_RING_CTRL "ringctrl: ran: $(cat "$out/ringctrl.why")"
fi

# --- recursion misses --------------------------------------------------------
# rec_run NAME BPF_RECURSE-ARGS...: bpf_recurse under mmlockstat --kprobes
# --full -j (every process: a skipped program never reaches the filters);
# 0 if both ran.
rec_run() {
	local name=$1
	shift
	if ! tool_start "$name" "$out/$name.json" "$out/$name.err" "$TOOL" --kprobes --full -j; then
		echo "mmlockstat attached: $(tail -n 2 "$out/$name.err")" >"$out/$name.why"
		return 1
	fi
	"$TESTBIN/bpf_recurse" -n $REC_N "$@" >"$out/$name.rec" 2>&1
	echo "$?" >"$out/$name.rec.rc"
	tool_stop "$name"
	[ "$TOOL_RC" = 0 ] && return 0
	echo "mmlockstat exit $TOOL_RC: $(tail -n 2 "$out/$name.err")" >"$out/$name.why"
	return 1
}
if [ "$want_miss" = None ]; then
	want_rec=0 want_rec_kp=None
else
	want_rec=$((3 * REC_N)) want_rec_kp=$REC_N
fi
if rec_run rec; then
	check_eq "rec: bpf_recurse's program took its mmap_lock on each call (exit $(cat "$out/rec.rec.rc"))" \
		"$(cat "$out/rec.rec")" "calls $REC_N hits $REC_N found $REC_N"
	check_eq "rec: 3 x $REC_N tracepoint runs skipped under the guard: drops.recursion_misses (kernel $(uname -r); 0: not counted before 6.7)" \
		"$(get rec 'o["drops"]["recursion_misses"]')" "$want_rec"
	check_eq "rec: the up_read kprobe inside another kprobe, $REC_N times: drops.kprobe_misses (None: not reported before 6.7)" \
		"$(get rec 'o["drops"]["kprobe_misses"]')" "$want_rec_kp"
else
	fail_n $N_REC "rec: ran: $(cat "$out/rec.why")"
fi
if rec_run recctrl --no-bpf; then
	check_eq "recctrl: the same calls, no program (exit $(cat "$out/recctrl.rec.rc"))" \
		"$(cat "$out/recctrl.rec")" "calls $REC_N hits 0 found 0"
	check_eq "recctrl: drops.recursion_misses" \
		"$(get recctrl 'o["drops"]["recursion_misses"]')" 0
else
	fail_n $N_REC_CTRL "recctrl: ran: $(cat "$out/recctrl.why")"
fi

pycheck "all JSON outputs match schema 1 (drops: every cause an integer, kprobe_misses may be null)" \
	schema "$out/full.json" "$out/ctrl.json" "$out/ring.json" "$out/ringctrl.json" \
	"$out/rec.json" "$out/recctrl.json"
finish
