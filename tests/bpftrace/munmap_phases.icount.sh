#!/usr/bin/env bash
# bpf/bpftrace/munmap_phases.bt compiles, attaches and, on 256 MiB populated
# munmaps (4 KiB pages) with a /proc/self/cmdline reader and an mprotect
# writer thread next to them, prints per-call lines whose phases fit the
# mode:
#   downgrade: total >= unmap_region, read-hold ~ unmap_region, short write;
#   exclusive: write-hold ~ total, no read phase;
#   section:   several write holds in the one call (the writer's waiting
#              makes the kernel drop the lock between 16 MiB sections), one
#              unmap_region() per section.
# One bpftrace session (it takes 10-30 s to attach under TCG), PID-filtered
# on one bt_munmap that does one iteration per mode (-g: the test sets the
# mode between iterations). With the PID filter every call the maps count
# must also have its line: @calls equals the lines printed.
#
# An icount file: one vCPU, guest time counts instructions. The reader and
# writer threads still get in the munmap's way on one vCPU: the zap calls
# cond_resched(), the woken writer runs there, queues on the read-held (or
# write-held) lock and sleeps, and the munmap goes on. remove_vma() after
# the zap is a preemption point too: the time the call spends off the CPU
# outside the zap is traced (sched_switch) and charged. The bounds compare
# the script's durations with each other and with the workload's clock
# (guest clocks): tests/bpftrace/bt_check.py (phases), with the figures.
. "${0%/*}/bt_lib.sh"	# no exec before its ticker
# kernels: debian-6.1 debian-6.12
# On Debian's kernels (no patch 0001: munmap always downgrades) only the
# downgrade call runs; there the first per-mode check is that the kernel
# has no vm.munmap_lock_mode, and on 6.12 the zap is timed in its three
# steps (the line says unmap_vmas+free_pgtables+tlb_finish_mmu).
modes=(downgrade exclusive section)
stock_kernel && modes=(downgrade)
# Checks: BTF offset, attach, a mode set per mode, workload, stop, the
# per-call checks (one subtest), 5 at the end.
plan $((1 + 1 + ${#modes[@]} + 1 + 1 + 1 + 5))
d=$(test_out bpftrace-munmap_phases)
out=$d/bpftrace.out
len=$((256 << 20)) sect=$((16 << 20))

off=$(bt_mmoff)
if [[ ${off:-} =~ ^[0-9]+$ ]] && [ "$off" -gt 0 ]; then
	ok "offsetof(struct mm_struct, mmap_lock) = $off from BTF"
else
	fail "offsetof(struct mm_struct, mmap_lock) from BTF: pahole gave '${off:-nothing}'"
	off=0
fi

bt_target "$d/workload.out" -s 256 -w -n "${#modes[@]}" || abort "$BT_WHY"
pid=$BT_TPID
# The munmap thread's sched_switch events, in an ftrace instance of their
# own (mono: the clock of bpftrace's nsecs): the check charges the time
# the call spent off the CPU outside the zap (bt_check.py phases --sched).
TI=/sys/kernel/tracing/instances/bt_phases
sched=()
[ ! -d "$TI" ] || rmdir "$TI"	# left by an aborted run in this guest
if mkdir "$TI" 2>"$d/sched.err" && echo mono >"$TI/trace_clock" &&
   echo "$pid" >"$TI/set_event_pid" &&
   echo 1 >"$TI/events/sched/sched_switch/enable" && echo 1 >"$TI/tracing_on"; then
	sched=(--sched "$d/sched.trace")
else
	echo "# no sched_switch trace: $(head -n 1 "$d/sched.err")"
fi
bt_start munmap_phases "$out" "$pid" "$off" ||
	abort "munmap_phases.bt compiles and attaches: $(tail -n 3 "$out" | tr '\n' ' ')"
ok "munmap_phases.bt compiles and attaches (PID $pid)"

ready=1
for i in "${!modes[@]}"; do
	m=${modes[$i]}
	if [ "$ready" = 1 ] && { [ "$i" = 0 ] || bt_next "$i"; }; then
		# section: 16 MiB sections, so that the 256 MiB munmap has many.
		# shellcheck disable=SC2046
		mode_check "$m" $([ "$m" = section ] && echo "$sect")
		bt_go
	else
		ready=0
		fail "set vm.munmap_lock_mode=$m: bt_munmap did not get ready for iteration $i"
	fi
done
bt_end
check_eq "bt_munmap (PID $pid) exits 0" "$?" 0
if [ -d "$TI" ]; then
	echo 0 >"$TI/tracing_on"
	cp "$TI/trace" "$d/sched.trace"
	echo 0 >"$TI/events/sched/sched_switch/enable"
	rmdir "$TI"
fi
stock_kernel || set_mode downgrade
bt_stop munmap_phases "$out" || abort "munmap_phases.bt printed no maps to check"
cp "$out" "$d/munmap_phases.txt"

# Per mode: the call's line (mode, phases) against the workload's clock
# and the other phases; bt_check.py phases has the bounds, with the
# figures they were measured from.
SUBTEST_ERR=$d/bt_check.err
subtest "munmap_phases: per-call lines of the 256 MiB munmaps fit their modes" \
	$BT_CHECK phases "${sched[@]}" "$out" "$d/workload.out" "$pid" "$len" "$sect" "${modes[@]}"

nlines=$(grep -cE '^ *[^ ].*-[0-9]+ +\[[0-9]+\] .*\|  } /\* len=' "$out")
ncalls=$(map_sum "$out" calls)
check "munmap_phases: a line for every call counted in @calls (lines $nlines, @calls $ncalls, want ${#modes[@]})" \
	[ "$nlines.$ncalls" = "${#modes[@]}.${#modes[@]}" ]
for h in total_us unmap_region_us write_hold_us; do
	n=$(hist_count "$out" "$h")
	check "munmap_phases prints @$h at exit ($n calls)" [ "$n" = "${#modes[@]}" ]
done
# Negative; the histograms above show that END ran and the maps printed.
check "munmap_phases END clears its scratch maps (no @start/@wsum printed)" \
	bash -c "! grep -qE '^@(start|wsum|rsum|len|active)\\[' '$out'"
finish
