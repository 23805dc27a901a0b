#!/usr/bin/env bash
# bpf/bpftrace/mmap_lock_wait.bt compiles, attaches and sees the waits a
# 256 MiB munmap causes:
#   downgrade: an mprotect writer queues behind the read phase for most of
#              it, the /proc/self/cmdline reader queues behind that writer;
#              the writer's stack (do_mprotect_pkey) tops the stacks and the
#              munmapping task is named as the read holder it waited behind;
#   exclusive: the reader waits for (most of) the whole munmap.
# One session per mode, so that each histogram is one mode's, each
# PID-filtered on its own bt_munmap -g (started first, so that the filter
# has a PID; it munmaps once the script is attached).
#
# An icount file: one vCPU, guest time counts instructions. The threads
# still get in the munmap's way on one vCPU: the zap calls cond_resched(),
# where the woken writer and reader run, queue on the lock and sleep. The
# bounds compare the script's waits with the workload's clock (guest
# clocks): tests/bpftrace/bt_check.py (wait-time), with the figures.
. "${0%/*}/bt_lib.sh"	# no exec before its ticker
# kernels: debian-6.1 debian-6.12
# On Debian's kernels (no patch 0001: munmap always downgrades) only the
# downgrade session runs, and its mode check is that the kernel has no
# vm.munmap_lock_mode.
modes=(downgrade exclusive)
stock_kernel && modes=(downgrade)
# Per mode: attach, mode set, workload, stop; then downgrade 6, exclusive 1.
plan $((${#modes[@]} * 4 + 6 + ${#modes[@]} - 1))
d=$(test_out bpftrace-mmap_lock_wait)
off=$(bt_mmoff)

# run_mode MODE: a bt_munmap -s 256 -w, mmap_lock_wait.bt on its PID, one
# munmap in MODE; 4 checks. Returns 1 if the script printed nothing to
# check or the workload printed no result; sets pid.
run_mode() {
	local m=$1 out=$d/bpftrace-$1.out w=$d/workload-$1.out
	pid=
	if ! bt_target "$w" -s 256 -w; then
		fail_n 4 "mmap_lock_wait $m: $BT_WHY"
		return 1
	fi
	pid=$BT_TPID
	if ! bt_start mmap_lock_wait "$out" "$pid" "${off:-0}"; then
		fail_n 4 "mmap_lock_wait.bt compiles and attaches ($m): $(tail -n 3 "$out" | tr '\n' ' ')"
		return 1
	fi
	ok "mmap_lock_wait.bt compiles and attaches ($m, PID $pid)"
	mode_check "$m"
	bt_go
	bt_end
	check_eq "bt_munmap ($m, PID $pid) exits 0" "$?" 0
	stock_kernel || set_mode downgrade
	bt_stop mmap_lock_wait "$out" || return 1
	cp "$out" "$d/mmap_lock_wait-$m.txt"
	grep -q '^bt_munmap pid=' "$w"
}

waitcount() { sed -n "s/^@wait_ns\[$2\]: count \([0-9]*\),.*/\1/p" "$1" | head -n1; }

if run_mode downgrade; then
	out=$d/bpftrace-downgrade.out
	nr=$(waitcount "$out" read)
	# The writer's wait against the munmap the workload timed:
	# bt_check.py wait-time has the bounds, with the figures.
	SUBTEST_ERR=$d/bt_check.err subtest "mmap_lock_wait downgrade: the writer waited behind the read phase" \
		$BT_CHECK wait-time "$out" "$d/workload-downgrade.out" downgrade
	check "mmap_lock_wait downgrade: reader waits seen (got ${nr:-none})" [ "${nr:-0}" -ge 1 ]
	check "mmap_lock_wait downgrade: @write_wait_us and @read_wait_us printed" \
		bash -c "[ $(hist_count "$out" write_wait_us) -ge 1 ] && [ $(hist_count "$out" read_wait_us) -ge 1 ]"
	# A reader-owned rwsem's owner field names the last reader that took it,
	# which may be one of bt_munmap's reader threads rather than the thread
	# in munmap(): any bt_munmap thread holding for read is right; a write
	# holder or another process is not.
	check "mmap_lock_wait downgrade: the writer is recorded behind a bt_munmap ($pid) thread holding for read" \
		grep -qE "^@blocked_by\[write, bt_munmap, [0-9]+, read-held\]: [1-9]" "$out"
	check "mmap_lock_wait downgrade: END ran: the top waiting stacks include the mprotect writer" \
		bash -c "sed -n '/^Top 5 waiting stacks/,\$p' '$out' | grep -q do_mprotect_pkey"
	# Negative; the check above shows that END ran and printed.
	check "mmap_lock_wait END clears its scratch maps" bash -c "! grep -qE '^@(wait_start|wait_flags|wait_stack)\\[' '$out'"
else
	fail_n 6 "mmap_lock_wait downgrade: no session output to check"
fi

if stock_kernel; then
	:	# no exclusive mode to run
elif run_mode exclusive; then
	out=$d/bpftrace-exclusive.out
	SUBTEST_ERR=$d/bt_check.err subtest "mmap_lock_wait exclusive: the reader waited for most of the munmap" \
		$BT_CHECK wait-time "$out" "$d/workload-exclusive.out" exclusive
else
	fail_n 1 "mmap_lock_wait exclusive: no session output to check"
fi
finish
