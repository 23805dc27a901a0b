#!/usr/bin/env bash
# mmlockstat_accuracy.guest.sh: mmlockstat against the test_mmap_lock
# calibration module (ground truth: the module's own ktime_get_ns()
# measurement of each hold, from .../last).
#
# tests/bin/mmls_hold makes known holds of its own mm's mmap_lock after a go
# signal and does nothing else that takes the lock for write in between, so
# `mmlockstat -p PID` must see exactly those holds.
#
# Tolerance (MMLS_TOL_US, default 200 us, + 1 % of the hold): for write
# holds and write phases the tool's interval encloses the module's --
# fexit(down_write_killable) is before the module's first ktime_get_ns(),
# fentry(up_write)/fentry(downgrade_write) after its last -- so the tool may
# only read longer, by the BPF trampoline and a few calls: ~1 us native,
# tens of us under TCG, plus whatever an interrupt or a descheduled vCPU
# adds inside that window on a loaded 2-core host. A read phase starts at
# fentry(downgrade_write), a few calls *after* the module's timestamp, so
# it may also read shorter: by at most MMLS_LOWER_US (default 50 us).
# A sample is in the right log2 bucket if it is in the truth's bucket, or
# in the neighbour that truth + tolerance (truth - lower) falls in. Sum and
# max must be within [truth - lower - 2 us, truth + tolerance] per sample.
# The truth is the module's measurement, not the request: on a loaded host
# under TCG a 200 us request can hold for milliseconds.
# Retries: under TCG on a shared host the vCPU thread can be descheduled for
# milliseconds anywhere, including inside the few-us window between the
# tool's timestamp and the module's; that moves one sample by ms (seen
# once in 9 at load average 13 on 2 cores). A case whose checks fail is
# therefore re-run, up to MMLS_ATTEMPTS (default 3) times; a broken tool
# fails every attempt. Attempts are logged on stderr.
# shellcheck disable=SC2317 # case_* functions are called through attempt()
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mmls_lib.sh"

TOOL=$TOP/bpf/mmlockstat
HOLD=$TESTBIN/mmls_hold
CHECK="/usr/bin/python3 $TOP/tests/tools/mmlockstat_check.py"
TOL_US=${MMLS_TOL_US:-200}
LOWER_US=${MMLS_LOWER_US:-50}
# --full ends a read hold at up_read (trampolines) or at the raw
# `released` tracepoint, a few calls after the module's timestamp; with
# --kprobes (perf tracepoints) stock 6.1 first formats the memcg path under
# kernfs_rename_lock: measured ~5 us per event under icount, ~130 us on
# average under MTTCG on the loaded 2-core host. FULL_TOL_US (1 ms) bounds
# the read side's extra work in every probe set.
FULL_TOL_US=${MMLS_FULL_TOL_US:-1000}
WAIT_TOL_MS=${MMLS_WAIT_TOL_MS:-4}
out=$(test_out mmlockstat_accuracy)

[ -x "$TOOL" ] || { fail "bpf/mmlockstat is built (make tools)"; finish; }
[ -x "$HOLD" ] || { fail "tests/bin/mmls_hold is built (make -C tests/tools)"; finish; }
# MMLS_TML_KO: an out-of-tree build of the module, for kernels without 0003
if [ -n "${MMLS_TML_KO:-}" ] && [ ! -d /sys/kernel/debug/test_mmap_lock ]; then
	insmod "$MMLS_TML_KO"
fi
if [ ! -d /sys/kernel/debug/test_mmap_lock ] &&
   ! modprobe test_mmap_lock 2>"$out/modprobe.err"; then
	fail "modprobe test_mmap_lock: $(head -n1 "$out/modprobe.err")"
	finish
fi

# run NAME "TOOL ARGS" HOLD ARGS...: mmls_hold waits for go; mmlockstat -p
# its pid; go; SIGINT the tool once the holds are done.
run() {
	mmls_run "$@"
	echo "# $1: tool rc=$? $(grep -c . "$out/$1.json") JSON line(s)" >&2
}

# truth NAME FIELD REQ-PREFIX: the module's measurements, ns
truth() {
	grep "^req=$3" "$out/$1.hold" | sed -n "s/.* $2=\([0-9]*\).*/\1/p" | tr '\n' ' '
}

# hist NAME HIST "TRUTH..." [checker options]
hist() {
	local f=$1 h=$2 t=$3
	shift 3
	# shellcheck disable=SC2086
	$CHECK hist "$out/$f.json" "$h" $t --tol-us "$TOL_US" --tol-pct 1 "$@"
}

# attempt NAME: run case_NAME until all its checks pass (MMLS_ATTEMPTS)
attempt() {
	local n max=${MMLS_ATTEMPTS:-3} res=$out/$1.result saved=$_failed
	for n in $(seq "$max"); do
		"case_$1" >"$res" 2>>"$out/$1.log"
		grep -q '^not ok' "$res" || break
		echo "# $1: attempt $n failed: $(grep -m1 '^not ok' "$res")" >&2
	done
	echo "# $1: $n attempt(s)" >&2
	cat "$res"
	_failed=$saved	# only the last attempt counts
	if grep -q '^not ok' "$res"; then _failed=1; fi
	return 0
}

# --- write holds, default probes (fentry) -----------------------------------
case_write() {
	run write "" write:200 write:200 write:200 write:2000 write:2000 \
		write:2000 write:20000 write:20000 write:20000
	hist write write_hold "$(truth write write_ns write)"
	check "write: no read_hold in default mode (read path not probed)" \
		test "$($CHECK get "$out/write.json" 'o["histograms"]["read_hold"]["count"]')" = 0
	check "write: top hold is a write hold by mmls_hold" \
		test "$($CHECK get "$out/write.json" 'o["top_holds"][0]["kind"] + "/" + o["top_holds"][0]["comm"]')" = write/mmls_hold
}

# --- plain read holds: invisible by default, seen with --full ---------------
R=(read:200 read:200 read:2000 read:2000 read:20000 read:20000)
case_read() {
	run read_default "" "${R[@]}"
	check "read holds: default mode adds no read-side samples" \
		test "$($CHECK get "$out/read_default.json" 'o["histograms"]["read_hold"]["count"] + o["histograms"]["write_hold"]["count"]')" = 0
	# --full sees every read hold of the process (a page fault is one
	# too): the module's holds must be among them, the longest must agree.
	run read_full "--full" "${R[@]}"
	hist read_full read_hold "$(truth read_full read_ns read)" --contains \
		--lower-us "$LOWER_US" --tol-us "$FULL_TOL_US"
	# raw tracepoints when they carry a memcg id (0002), else trampolines
	local want=fentry
	[ "$($CHECK get "$out/read_full.json" 'o["tracepoint_memcg"]')" = id ] && want=tp_btf
	check "read holds: --full read probes are $want on this kernel" \
		test "$($CHECK get "$out/read_full.json" 'o["read_probes"]')" = "$want"
	# the trampoline set (what stock 6.1 gets) gives the same answer
	MMLS_READ_PROBES=fentry run read_fentry "--full" "${R[@]}"
	check "read holds: MMLS_READ_PROBES=fentry uses the rwsem read functions" \
		test "$($CHECK get "$out/read_fentry.json" 'o["read_probes"]')" = fentry
	hist read_fentry read_hold "$(truth read_fentry read_ns read)" --contains \
		--lower-us "$LOWER_US" --tol-us "$FULL_TOL_US"
}

# --- downgrade: write phase and read phase apart ---------------------------
D=(downgrade:200:2000 downgrade:200:2000 downgrade:2000:20000
   downgrade:2000:20000 downgrade:20000:200 downgrade:20000:200)
case_dg_default() {
	# default mode: the read phase ends at the return of the function
	# that downgraded; for the module that is its debugfs write, full_proxy_write
	# (-E): lib/ is built without ftrace, so tml_hold_write cannot be probed.
	run dg_default "-E full_proxy_write" "${D[@]}"
	hist dg_default downgrade_write_phase "$(truth dg_default write_ns downgrade)"
	hist dg_default downgrade_read_phase "$(truth dg_default read_ns downgrade)" --lower-us "$LOWER_US"
	hist dg_default write_hold "$(truth dg_default write_ns downgrade)"
	hist dg_default read_hold "$(truth dg_default read_ns downgrade)" --lower-us "$LOWER_US"
}
case_dg_full() {
	run dg_full "--full" "${D[@]}"
	hist dg_full downgrade_write_phase "$(truth dg_full write_ns downgrade)" --tol-us "$FULL_TOL_US"
	hist dg_full downgrade_read_phase "$(truth dg_full read_ns downgrade)" --lower-us "$FULL_TOL_US"
}
case_dg_noend() {
	# without -E, default mode cannot see the module's read-phase end: it
	# must not invent a duration
	run dg_noend "" downgrade:2000:2000 downgrade:2000:2000
	check "downgrade without its end function: no read phase invented" \
		test "$($CHECK get "$out/dg_noend.json" 'o["histograms"]["downgrade_read_phase"]["count"]')" = 0
	check "downgrade without its end function: write phases still counted" \
		test "$($CHECK get "$out/dg_noend.json" 'o["histograms"]["downgrade_write_phase"]["count"]')" = 2
}

# --- kprobe fallback gives the same answer ----------------------------------
case_write_kp() {
	run write_kp "--kprobes" write:2000 write:2000 write:20000
	hist write_kp write_hold "$(truth write_kp write_ns write)"
}

# --- a reader blocked behind a write hold: read_wait and blame ---------------
# The reader thread pread()s /proc/self/cmdline 2 ms into each 20 ms write
# hold and times it. The tool's wait (contention_begin..end) lies inside
# the reader's pread, so tool <= self-measured, and the difference is the
# pread's own work around the lock plus whatever stalls the vCPU before the
# rwsem slow path or after the wakeup: allowed WAIT_TOL_MS (4 ms) + 10 %.
# 2.85 ms was seen once on a quiet host (single-threaded TCG runs one vCPU
# at a time and may leave the other waiting up to its 100 ms kick); a tool
# that does not see the wait, or times it from the hold's start, is off by
# ~18 ms or more.
case_wait() {
	local selfmax n tmax hold_pid blame
	run wait "-s" -r 2000 write:20000 write:20000 write:20000
	selfmax=$(sed -n 's/.* reader_ns=\([0-9]*\).*/\1/p' "$out/wait.hold" | sort -n | tail -1)
	n=$($CHECK get "$out/wait.json" 'o["histograms"]["read_wait"]["count"]')
	check_range "wait: 3 readers blocked, read_wait count" "$n" 3 3
	tmax=$($CHECK get "$out/wait.json" 'o["histograms"]["read_wait"]["max"]')
	check_range "wait: read_wait max vs reader's own max ${selfmax} ns" "$tmax" \
		"$((selfmax - WAIT_TOL_MS * 1000000 - selfmax / 10))" "$selfmax"
	# per wait: the top_waits list holds each of the 3 waits
	read -r -a tw <<<"$($CHECK get "$out/wait.json" '" ".join(str(w["wait_ns"]) for w in sorted(o["top_waits"], key=lambda w: w["wait_ns"]) if w["type"] == "read")')"
	read -r -a rw <<<"$(sed -n 's/.* reader_ns=\([0-9]*\).*/\1/p' "$out/wait.hold" | sort -n | tr '\n' ' ')"
	for i in 0 1 2; do
		check_range "wait $i: tool ${tw[$i]:-none} ns vs reader's own ${rw[$i]} ns" \
			"${tw[$i]:-0}" "$((rw[i] - WAIT_TOL_MS * 1000000 - rw[i] / 10))" "${rw[$i]}"
	done
	check_range "wait: reader blocked most of the remaining 18 ms" "$tmax" 12000000 200000000
	hold_pid=$(sed -n 's/^ready \([0-9]*\)/\1/p' "$out/wait.hold")
	blame=$($CHECK get "$out/wait.json" 'str(o["top_waits"][0]["holder"]["pid"]) + "/" + o["top_waits"][0]["holder"]["phase"] + "/" + o["top_waits"][0]["type"]')
	check "wait: longest wait blamed on the holder (pid $hold_pid, write phase): $blame" \
		test "$blame" = "$hold_pid/write/read"
	check "wait: -s gives the waiter's kernel stack" \
		grep -q 'proc_pid_cmdline_read\|access_remote_vm\|rwsem_down_read_slowpath' "$out/wait.json"
}

for c in write read dg_default dg_full dg_noend write_kp wait; do
	attempt "$c"
done

# --- every JSON output matches schema 1 ------------------------------------
for f in "$out"/*.json; do
	$CHECK schema "$f" || true
done >"$out/schema.txt"
jsons=("$out"/*.json)
check "all ${#jsons[@]} JSON outputs match schema 1" \
	sh -c "! grep -q '^not ok' '$out/schema.txt'"
finish
