#!/usr/bin/env bash
# bpf/bpftrace/mmap_lock_hold.bt compiles, attaches, honours its PID filter,
# and splits a downgraded munmap into a short write phase and a read phase
# as long as the munmap; in exclusive mode the write hold is the munmap.
#
# One session, PID-filtered on a bt_munmap (no reader thread) that maps,
# populates and unmaps 32 MiB twice: iteration 0 in downgrade mode,
# iteration 1 in exclusive mode. Before that a decoy process (not the PID)
# maps, populates and unmaps 256 MiB in downgrade mode.
#
# An icount file (one vCPU, guest time counts instructions): the bounds
# compare the script's durations with the workload's own clock, both guest
# clocks, so they are as repeatable as the instructions run; nothing here
# needs two threads at once. The bounds and their figures (20 runs):
# tests/bpftrace/bt_check.py (hold-times) and the comments below.
#
# The PID filter is checked by counts: the decoy's 65536 page faults, its
# write holds (exec, ld.so, mmap, madvise, munmap) and its downgrade would
# push the read-hold count past the target's faults, the write-hold count
# past the target's 6 and the downgrade count past 1; its 256 MiB read
# phase would exceed the target's whole munmap. The positive control
# before them: the target's own downgrade and page faults were counted.
#
# Lab kernel only (no "# kernels:" line): iteration 1 needs patch 0001's
# exclusive mode, and the PID-filter counts take every page fault for an
# mmap_lock read hold, which 6.12's faults (per-VMA locks) are not.
. "${0%/*}/bt_lib.sh"	# no exec before its ticker
# 6 before the figures, the hold-times subtest, 4 PID filter checks, 4
# histograms, END.
plan $((6 + 1 + 4 + 4 + 1))
d=$(test_out bpftrace-mmap_lock_hold)
out=$d/bpftrace.out
off=$(bt_mmoff)
tmib=32 dmib=256
faults=$((2 * tmib * 256))	# 4 KiB pages populated by the target

bt_target "$d/target.out" -s "$tmib" -n 2 -R || abort "$BT_WHY"
pid=$BT_TPID

bt_start mmap_lock_hold "$out" "$pid" "${off:-0}" ||
	abort "mmap_lock_hold.bt compiles and attaches: $(tail -n 3 "$out" | tr '\n' ' ')"
ok "mmap_lock_hold.bt compiles and attaches (PID $pid, mmap_lock at mm+${off:-0})"

check "set vm.munmap_lock_mode=downgrade (patch 0001)" set_mode downgrade
"$BT_W" -s "$dmib" -R >"$d/decoy.out" 2>&1
check_eq "the decoy bt_munmap ($dmib MiB, not PID $pid) exits 0" "$?" 0
bt_go
if bt_next 1; then
	check "set vm.munmap_lock_mode=exclusive" set_mode exclusive
	bt_go
else
	fail "the target bt_munmap (PID $pid) is ready for its exclusive iteration: $(tail -n 2 "$d/target.out" | tr '\n' ' ')"
fi
bt_end
check_eq "the target bt_munmap (PID $pid) exits 0" "$?" 0
set_mode downgrade
bt_stop mmap_lock_hold "$out" || abort "mmap_lock_hold.bt printed no maps to check"
cp "$out" "$d/mmap_lock_hold.txt"

ndg=$(stat_count "$out" hold_ns downgrade_write_phase)
nrd=$(stat_count "$out" hold_ns read)
nwr=$(stat_count "$out" hold_ns write)
echo "# FIGURES mmap_lock_hold ndg=$ndg nrd=$nrd nwr=$nwr faults=$faults" >&2

# The longest holds against the workload's munmap times, and the PID
# filter's read phase against the decoy's: bt_check.py hold-times has the
# bounds, with the figures they were measured from.
SUBTEST_ERR=$d/bt_check.err
subtest "mmap_lock_hold: write hold, read and write phase against the munmaps the workloads timed" \
	$BT_CHECK hold-times "$out" "$d/target.out" "$d/decoy.out"
# Positive control for the PID filter checks below: the script saw the
# target's downgrade and the target's page faults.
check "mmap_lock_hold PID filter, positive control: the target's downgrade and its $faults page faults are counted (downgrades ${ndg:-none} >= 1, read holds ${nrd:-none} >= $faults)" \
	test "${ndg:-0}" -ge 1 -a "${nrd:-0}" -ge "$faults"
check_eq "mmap_lock_hold PID filter: one downgrade, the target's downgraded munmap; not the decoy's" "${ndg:-none}" 1
# Each of the target's page faults holds the lock for read once
# (mmap_read_trylock); the rest of its life adds a few: measured +2..+3
# (n=20 runs of `tests/run -k tests/bpftrace/`, one `scripts/vm-run
# --icount --cpus 1` guest each); allowed +0..+16. The errors that
# matter: the decoy's 65536 faults let through, a fault counted twice
# (+16384).
check_range "mmap_lock_hold PID filter: read holds = the target's $faults page faults + 0..16, not the decoy's $((dmib * 256))" \
	"${nrd:-0}" "$faults" $((faults + 16))
# mmap, madvise and munmap per iteration, exactly.
check_eq "mmap_lock_hold PID filter: write holds = the target's 2 x (mmap, madvise, munmap), not the decoy's" "${nwr:-none}" 6
for h in write_hold_us read_hold_us downgrade_write_phase_us downgrade_read_phase_us; do
	n=$(hist_count "$out" "$h")
	check "mmap_lock_hold prints @$h ($n holds)" [ "$n" -ge 1 ]
done
# Negative; the histograms above show that END ran and the maps printed.
check "mmap_lock_hold END clears its scratch maps (no @wstart, @rstart, @wphase printed)" \
	bash -c "! grep -qE '^@(wstart|rstart|wphase)\\[' '$out'"
finish
