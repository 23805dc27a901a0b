#!/usr/bin/env bash
# calib.guest.sh: the test_mmap_lock calibration module (kernel patch 0003).
#
# A thread of tests/bin/calib_wait asks the module to hold the process's own
# mmap_lock while a second thread of the same process contends for it
# (reads /proc/self/cmdline = mmap_read_lock, or mprotect() =
# mmap_write_lock) and times each attempt with CLOCK_MONOTONIC.
#
# Bounds, and why they are what they are:
# - A contender that collides with a 10 ms write hold waits at least the
#   part of the hold left when it started; it loops back-to-back, so it
#   starts within one operation (tens of us under TCG) of the lock being
#   taken: >= 8 ms leaves 2 ms for that and for clock skew.  A module that
#   does not take the lock, or takes the wrong mode, gives ~0.
# - It cannot wait longer than the hold plus its wakeup latency.  Under TCG
#   on a busy 2-core host a vCPU can be off-CPU for a few ms, so the upper
#   bound is the module's own measured hold + SLACK_MS (default 15 ms); a
#   module that holds too long (e.g. microseconds read as ms) or that keeps
#   readers out during the read phase of a downgrade overshoots it.
# - "Not blocked" (read hold vs. reader, read phase of a downgrade) is shown
#   by operations that completed entirely inside the phase (>= 10; a blocked
#   contender completes none).
# - The module's hold (the "last" file) is >= the request by construction
#   (it sleeps to an absolute deadline) and within SLACK_MS of it.
# - The phases are placed on the contender's clock with the instants the
#   module reports (locked/downgraded/unlocked_at_ns), not from the
#   write() around them: that write() waited ~5 ms for the lock or for
#   the vCPU in a CI run, which once counted 94 reads of the read phase
#   as completed in the write phase.
# - Upper bounds, and the count of reads completed inside a read phase, are
#   the checks host scheduling can break (a vCPU descheduled for longer
#   than SLACK_MS; single-threaded TCG may leave a vCPU waiting up to its
#   100 ms kick, longer than a whole 10 ms read hold).  A case that misses
#   one is run again, up to ATTEMPTS times, and every attempt is logged; a
#   module that holds too long or keeps readers out fails every attempt.
#   The lower bounds on waits and the "no read completed in the write
#   phase" count (summed over all attempts) are never retried away.
# shellcheck disable=SC2154 # kv_* are set by run()
# shellcheck disable=SC2016 # run_case evaluates its bounds per attempt
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

CW=$TESTBIN/calib_wait
SLACK_MS=${CALIB_SLACK_MS:-15}
ATTEMPTS=${CALIB_ATTEMPTS:-3}
HOLD=/sys/kernel/debug/test_mmap_lock/hold
LAST=/sys/kernel/debug/test_mmap_lock/last
out=$(test_out calib)

ms() { echo $(($1 * 1000000)); }

# run NAME ARGS...: run calib_wait, keep its output, load key=value into $kv_*
run() {
	local name=$1 line v
	shift
	for v in ${!kv_*}; do unset "$v"; done
	"$CW" "$@" >"$out/$name.txt" 2>"$out/$name.err"
	for line in $(grep -E '^[a-z_]+=-?[0-9a-z]+$' "$out/$name.txt"); do
		printf -v "kv_${line%%=*}" '%s' "${line#*=}"
	done
	echo "# $name: $(tr '\n' ' ' <"$out/$name.txt")" >&2
}

# le A B: A <= B for integers, false when either is missing.
le() { [ "${1:-x}" -le "${2:-x}" ] 2>/dev/null; }

# run_case NAME OK ARGS...: run calib_wait until the shell expression OK
# (the case's scheduling-sensitive bounds, on $kv_*) holds, at most
# ATTEMPTS times.  The rest of the checks look at the last attempt.
# $wops_all sums write_phase_ops over all attempts.
run_case() {
	local name=$1 bounds=$2 i
	shift 2
	wops_all=0
	for ((i = 1; i <= ATTEMPTS; i++)); do
		run "$name" "$@"
		cp "$out/$name.txt" "$out/$name.$i.txt"
		wops_all=$((wops_all + ${kv_write_phase_ops:-0}))
		[ "${kv_rc:-}" = 0 ] || return 0
		eval "$bounds" && return 0
		[ "$i" -lt "$ATTEMPTS" ] && echo "# $name: attempt $i of $ATTEMPTS missed a scheduling-sensitive bound, again" >&2
	done
	return 0
}

if [ ! -x "$CW" ]; then
	fail "calib_wait is built: $CW missing (make -C tests/kernel)"
	finish
fi
if ! modprobe test_mmap_lock 2>"$out/modprobe.err"; then
	fail "modprobe test_mmap_lock: $(head -n1 "$out/modprobe.err") (CONFIG_TEST_MMAP_LOCK=m and patch 0003 in the series?)"
	finish
fi
ok "modprobe test_mmap_lock"

check "hold is write-only (0200)" test "$(stat -c %a "$HOLD")" = 200
check "last is read-only (0444)" test "$(stat -c %a "$LAST")" = 444
check "last has the write_ns=N read_ns=N locked_at_ns=N downgraded_at_ns=N unlocked_at_ns=N format" \
	grep -qE '^write_ns=[0-9]+ read_ns=[0-9]+ locked_at_ns=[0-9]+ downgraded_at_ns=[0-9]+ unlocked_at_ns=[0-9]+$' "$LAST"

# --- bad requests: -EINVAL, nothing held ---------------------------------
long=$(printf 'write %080d' 1)
for req in "write 0" "write 99999999" "write 10000001" "bogus 5" "write" \
	"write 5 junk" "write 5junk" "read -5" "read 0x10" "downgrade 5" \
	"downgrade 5 0" "downgrade 5 6 7" "read 5 6" "   " "$long"; do
	run bad -x "$req"
	if [ "${kv_rc:-}" = -1 ] && [ "${kv_errno:-}" = 22 ]; then
		ok "request '${req:0:24}' rejected with EINVAL"
	else
		fail "request '${req:0:24}' rejected with EINVAL: rc=${kv_rc:-?} errno=${kv_errno:-?}"
	fi
done
run good -x "write 1000"
check "a good request returns the byte count (write 1000)" test "$kv_rc/$kv_errno" = 0/0
run good -x $'read 2000\n'
check "a request with a trailing newline (echo) is accepted" test "$kv_rc/$kv_errno" = 0/0

# --- write hold vs. reader -------------------------------------------------
hold_ok() { le "$1" "$(ms $((${2} + SLACK_MS)))"; }
run_case write_reader 'hold_ok "$kv_last_write_ns" 10 && le "$kv_max_wait_ns" $((kv_last_write_ns + $(ms SLACK_MS)))' \
	"write 10000"
check "write 10000: hold succeeded" test "$kv_rc" = 0
check_range "write 10000: module hold write_ns" "$kv_last_write_ns" "$(ms 10)" "$(ms $((10 + SLACK_MS)))"
check "write 10000: read_ns is 0" test "$kv_last_read_ns" = 0
check_range "write 10000: /proc/self/cmdline reader waited (ns)" "$kv_max_wait_ns" \
	"$(ms 8)" $((kv_last_write_ns + $(ms SLACK_MS)))

# --- write hold vs. writer --------------------------------------------------
run_case write_writer 'le "$kv_max_wait_ns" $((kv_last_write_ns + $(ms SLACK_MS)))' \
	-w "write 10000"
check_range "write 10000: mprotect writer waited (ns)" "$kv_max_wait_ns" \
	"$(ms 8)" $((kv_last_write_ns + $(ms SLACK_MS)))

# --- read hold vs. reader and writer -----------------------------------------
run_case read_reader 'hold_ok "$kv_last_read_ns" 10 && le 10 "$kv_read_phase_ops"' "read 10000"
check "read 10000: hold succeeded" test "$kv_rc" = 0
check_range "read 10000: module hold read_ns" "$kv_last_read_ns" "$(ms 10)" "$(ms $((10 + SLACK_MS)))"
check "read 10000: write_ns is 0" test "$kv_last_write_ns" = 0
# Not asserted: the longest single read (a descheduled vCPU on a loaded
# host shows up here, ~10 ms measured under load 27); printed above.
check_range "read 10000: reader ops completed inside the hold" "$kv_read_phase_ops" 10 1000000000
run_case read_writer 'le "$kv_max_wait_ns" $((kv_last_read_ns + $(ms SLACK_MS)))' \
	-w "read 10000"
check_range "read 10000: mprotect writer waited (ns)" "$kv_max_wait_ns" \
	"$(ms 8)" $((kv_last_read_ns + $(ms SLACK_MS)))

# --- downgrade: readers blocked only for the write phase ---------------------
run_case downgrade_reader 'hold_ok "$kv_last_write_ns" 10 && hold_ok "$kv_last_read_ns" 40 &&
	le "$kv_write_phase_max_ns" $((kv_last_write_ns + $(ms SLACK_MS))) && le 10 "$kv_read_phase_ops"' \
	"downgrade 10000 40000"
check "downgrade 10000 40000: hold succeeded" test "$kv_rc" = 0
check_range "downgrade: module write phase (ns)" "$kv_last_write_ns" "$(ms 10)" "$(ms $((10 + SLACK_MS)))"
check_range "downgrade: module read phase (ns)" "$kv_last_read_ns" "$(ms 40)" "$(ms $((40 + SLACK_MS)))"
check_range "downgrade: reader waited through the write phase (ns)" "$kv_write_phase_max_ns" \
	"$(ms 8)" $((kv_last_write_ns + $(ms SLACK_MS)))
check_range "downgrade: reader ops completed in the read phase" "$kv_read_phase_ops" 10 1000000000
check_range "downgrade: reader ops completed in the write phase, all attempts" "$wops_all" 0 0
run_case downgrade_writer 'le "$kv_max_wait_ns" $((kv_last_write_ns + kv_last_read_ns + $(ms SLACK_MS)))' \
	-w "downgrade 10000 40000"
check_range "downgrade: mprotect writer waited for both phases (ns)" "$kv_max_wait_ns" \
	$((kv_last_write_ns + kv_last_read_ns - $(ms 2))) \
	$((kv_last_write_ns + kv_last_read_ns + $(ms SLACK_MS)))

# --- a fatal signal ends a long hold at once ------------------------------------
run kill -k 200000
check "SIGKILL during 'write 5000000' kills the holder" test "${kv_killed:-}/${kv_signal:-}" = 1/9
check_range "holder exited after SIGKILL within 1 s (ns)" "${kv_exit_after_kill_ns:-999999999999}" 0 "$(ms 1000)"
run after_kill -x "write 1000"
check "the module still serves requests after the killed hold" test "$kv_rc/$kv_errno" = 0/0

check "rmmod test_mmap_lock" rmmod test_mmap_lock
finish
