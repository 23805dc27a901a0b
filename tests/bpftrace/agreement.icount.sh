#!/usr/bin/env bash
# The bpftrace scripts agree with the libbpf tools on the same munmaps:
#   munmap_phases.bt vs munmapsnoop -j: the same calls, the same modes; per
#     call the total, unmap_region, write hold and read hold agree;
#   mmap_lock_hold.bt vs mmlockstat -j (DESIGN.md section 5): the numbers
#     and maxima of write_hold, downgrade_write_phase and
#     downgrade_read_phase agree; its read phase agrees with munmap_phases.
# All four trace the same bt_munmap process at once (PID filter; no reader
# thread), which maps, populates and unmaps 64 MiB twice: in downgrade
# mode, then in exclusive mode, so write_hold's maximum is a whole
# exclusive munmap.
#
# An icount file (one vCPU, guest time counts instructions; nothing here
# needs two threads at once). Every tool takes its timestamps in BPF
# programs on the same kernel functions with the same clock; what
# separates two tools is the run time of the programs between their
# timestamps (the programs of one function share a trampoline, newest
# attached first: bpf/bpftrace/README.md, "Tracers attached together").
# Under TCG with 2 vCPUs that was 0.1-1.1 ms, plus whole host time slices
# on a loaded host, hence the old 10 % + 4 ms, which a write phase of
# 0.3 ms read as 3 ms would still have met. Under icount it is a number of
# instructions: the tolerances come from the spread measured over 20
# runs (tests/bpftrace/bt_check.py, MEASURED, with the figures). The
# attach order is fixed: munmapsnoop, mmlockstat, munmap_phases.bt,
# mmap_lock_hold.bt.
#
# Lab kernel only (no "# kernels:" line): its exclusive-mode munmap needs
# patch 0001's sysctl, and its tolerances are the lab's measured spreads;
# on Debian's kernels each script is checked against ground truth by its
# own file instead (munmap_phases, mmap_lock_wait, mmlockstat_accuracy,
# munmapsnoop_ftrace).
. "${0%/*}/bt_lib.sh"	# no exec before its ticker
modes=(downgrade exclusive)
# 4 attaches, 2 mode sets, the workload, 4 stops, 2 groups of comparisons.
plan $((4 + ${#modes[@]} + 1 + 4 + 2))
d=$(test_out bpftrace-agreement)
MMLOCKSTAT=$TOP/bpf/mmlockstat
MUNMAPSNOOP=$TOP/bpf/munmapsnoop
[ -x "$MMLOCKSTAT" ] && [ -x "$MUNMAPSNOOP" ] ||
	abort "bpf/mmlockstat and bpf/munmapsnoop are built (make tools)"
off=$(bt_mmoff)
len=$((64 << 20))

bt_target "$d/target.out" -s 64 -n "${#modes[@]}" -R || abort "$BT_WHY"
pid=$BT_TPID

# The libbpf tools write to /tmp while they run (no 9p round trips in the
# guest while they trace; bt_lib.sh): copied to $d when they stop.
live=/tmp/bt-agree.$$
tool_start munmapsnoop "$live.munmapsnoop.json" "$live.munmapsnoop.err" "$MUNMAPSNOOP" -p "$pid" -j ||
	abort "munmapsnoop -p $pid -j attaches: $(tail -n 2 "$live.munmapsnoop.err" | tr '\n' ' ')"
ok "munmapsnoop -p $pid -j attaches"
tool_start mmlockstat "$live.mmlockstat.json" "$live.mmlockstat.err" "$MMLOCKSTAT" -p "$pid" -j ||
	abort "mmlockstat -p $pid -j attaches: $(tail -n 2 "$live.mmlockstat.err" | tr '\n' ' ')"
ok "mmlockstat -p $pid -j attaches"
bt_start munmap_phases "$d/munmap_phases.out" "$pid" "${off:-0}" ||
	abort "munmap_phases.bt attaches: $(tail -n 2 "$d/munmap_phases.out" | tr '\n' ' ')"
ok "munmap_phases.bt attaches (PID $pid)"
bt_start mmap_lock_hold "$d/mmap_lock_hold.out" "$pid" "${off:-0}" ||
	abort "mmap_lock_hold.bt attaches: $(tail -n 2 "$d/mmap_lock_hold.out" | tr '\n' ' ')"
ok "mmap_lock_hold.bt attaches (PID $pid)"

ready=1
for i in "${!modes[@]}"; do
	m=${modes[$i]}
	if [ "$ready" = 1 ] && { [ "$i" = 0 ] || bt_next "$i"; }; then
		check "set vm.munmap_lock_mode=$m" set_mode "$m"
		bt_go
	else
		ready=0
		fail "set vm.munmap_lock_mode=$m: bt_munmap did not get ready for iteration $i"
	fi
done
bt_end
check_eq "bt_munmap (PID $pid) exits 0" "$?" 0
set_mode downgrade

# The scripts first (nothing is started between a SIGINT and their exit);
# mmlockstat -p may already have left with the PID (exit 0 then too).
bt_stop munmap_phases "$d/munmap_phases.out"
bt_stop mmap_lock_hold "$d/mmap_lock_hold.out"
for t in munmapsnoop mmlockstat; do
	tool_stop "$t"
	cp "$live.$t.json" "$d/$t.json"
	cp "$live.$t.err" "$d/$t.err"
	check_eq "$t exits 0 on SIGINT (or with its PID)" "$TOOL_RC" 0
done

SUBTEST_ERR=$d/bt_check.err
subtest "munmap_phases.bt and munmapsnoop -j agree on each 64 MiB munmap" \
	$BT_CHECK calls "$d/munmap_phases.out" "$d/munmapsnoop.json" "$pid" "$len" "${modes[@]}"
subtest "mmap_lock_hold.bt agrees with mmlockstat -j and munmap_phases.bt" \
	$BT_CHECK hold "$d/mmap_lock_hold.out" "$d/mmlockstat.json" "$d/munmap_phases.out" "$pid" "$len"
finish
