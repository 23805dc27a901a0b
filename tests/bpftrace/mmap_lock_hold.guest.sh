#!/usr/bin/env bash
# bpf/bpftrace/mmap_lock_hold.bt compiles, attaches, honours its PID filter,
# and splits a downgraded munmap into a short write phase and a read phase
# as long as the munmap; in exclusive mode the write hold is the munmap.
#
# One session, PID-filtered on a bt_munmap (no reader thread) that maps,
# populates and unmaps 32 MiB twice: iteration 0 in downgrade mode,
# iteration 1 in exclusive mode when vm.munmap_lock_mode exists (else
# downgrade again). Before that a decoy process (not the PID) maps,
# populates and unmaps 256 MiB in downgrade mode.
#
# The PID filter is checked by counts, which do not depend on timing: the
# decoy's 65536 page faults, its ~20 write holds (exec, ld.so, mmap,
# madvise, munmap) and its downgrade would push the read-hold count over
# 16384 + 4096, the write-hold count over 12 and the downgrade count over
# the target's. The durations give a second check when the decoy's munmap
# really took more than twice the target's (8x the memory, but wall time
# under TCG on a loaded host is not guaranteed): then a leaked decoy read
# phase would exceed the target's munmap; otherwise that check is skipped
# with both times.
. "$(dirname "$0")/bt_lib.sh"
d=$(test_out bpftrace-mmap_lock_hold)
out=$d/bpftrace.out
go=/tmp/bt-hold-go
rm -f "$go"
off=$(bt_mmoff)
tmib=32 dmib=256
faults=$((2 * tmib * 256))	# 4 KiB pages populated by the target

bt_target "$d/target.out" -s "$tmib" -n 2 -R -g "$go" || finish
wl=$BT_WL pid=$BT_TPID

if ! bt_start mmap_lock_hold "$out" "$pid" "${off:-0}"; then
	fail "mmap_lock_hold.bt compiles and attaches: $(tail -n 3 "$out" | tr '\n' ' ')"
	kill "$wl"
	finish
fi
ok "mmap_lock_hold.bt compiles and attaches (PID $pid, mmap_lock at mm+${off:-0})"

set_mode downgrade || fail "set vm.munmap_lock_mode=downgrade"
"$BT_W" -s "$dmib" -R >"$d/decoy.out" 2>&1 || fail "bt_munmap (decoy) exited $?"
touch "$go"
wait_for "$d/target.out" 'ready pid=.* iter=1' 600 "$wl"
mode1=downgrade
have_modes && mode1=exclusive
set_mode "$mode1" || fail "set vm.munmap_lock_mode=$mode1"
touch "$go"
wait "$wl" || fail "bt_munmap (target) exited $?"
set_mode downgrade
bt_stop
bt_stopped mmap_lock_hold.bt || finish
cp "$out" "$d/mmap_lock_hold.txt"

u0=$(kv " $(grep 'iter=0 len' "$d/target.out")" munmap_us)
u1=$(kv " $(grep 'iter=1 len' "$d/target.out")" munmap_us)
uo=$(kv " $(grep 'len' "$d/decoy.out")" munmap_us)
echo "# munmap_us: target iter0(downgrade)=$u0 iter1($mode1)=$u1 decoy($dmib MiB)=$uo" >&2
if [ -z "$u0" ] || [ -z "$u1" ] || [ -z "$uo" ]; then
	fail "mmap_lock_hold: the workloads printed their results: $(cat "$d/target.out" "$d/decoy.out" | tr '\n' ' ')"
	finish
fi

maxus() { local v; v=$(map_val "$out" hold_max_ns "$1"); echo $((${v:-0} / 1000)); }
rmax=$(maxus downgrade_read_phase)
wmax=$(maxus write)
dgw=$(maxus downgrade_write_phase)
ndg=$(stat_count "$out" hold_ns downgrade_write_phase)
nrd=$(stat_count "$out" hold_ns read)
nwr=$(stat_count "$out" hold_ns write)
echo "# read phase max ${rmax}us, write max ${wmax}us, downgrade write phase max ${dgw}us; counts: downgrades=$ndg reads=$nrd writes=$nwr" >&2

if [ "$mode1" = exclusive ]; then
	ndg_want=1 lo=$u0 hi=$u0
	# The exclusive munmap is by far the longest write hold (mmap and
	# madvise of 32 MiB take well under a millisecond). Upper bound: the
	# hold lies inside the timed munmap() call (+1 ms for the clock
	# reads). Lower bound: the zap of 8192 populated pages is in the hold
	# and takes well over 1 ms under TCG (13-110 ms seen); a
	# fraction of the user-space time is no bound, as a host that
	# deschedules the vCPU stretches munmap() outside the lock too (seen:
	# 455 ms munmap(), 110 ms read phase, host load 8 on 2 cores).
	fcheck "mmap_lock_hold exclusive: write-hold max (${wmax} us) inside the exclusive munmap (${u1} us) and >= 1 ms (the zap)" \
		"$wmax >= 1000 && $wmax <= $u1 + 1000"
else
	skip "mmap_lock_hold exclusive: write-hold max ~ munmap" "no vm.munmap_lock_mode in this kernel"
	ndg_want=2 lo=$((u0 < u1 ? u0 : u1)) hi=$((u0 > u1 ? u0 : u1))
fi
# Bounds as for the exclusive hold: inside the munmap() call, and at least
# the 1 ms that zapping 8192 pages takes (a tracer that ended the read
# phase early, e.g. at unmap_region's start, or missed it, is below).
fcheck "mmap_lock_hold downgrade: read-phase max (${rmax} us) inside the downgraded munmap (${lo}..${hi} us) and >= 1 ms (the zap)" \
	"$rmax >= 1000 && $rmax <= $hi + 1000"
fcheck "mmap_lock_hold downgrade: write phase (max ${dgw} us) < 10% of the read phase (${rmax} us)" "$dgw < $rmax / 10"
check "mmap_lock_hold PID filter: one downgrade per downgraded munmap of the target, none of the decoy (want $ndg_want, got ${ndg:-none})" \
	[ "${ndg:-0}" = "$ndg_want" ]
# Each of the target's page faults holds the lock for read once
# (mmap_read_trylock); the slack covers faults on its stack and libc data.
check_range "mmap_lock_hold PID filter: read holds = the target's $faults page faults + a few, not the decoy's $((dmib * 256))" \
	"${nrd:-0}" "$faults" $((faults + 4096))
# mmap, madvise and munmap per iteration.
check_range "mmap_lock_hold PID filter: write holds = the target's 2 x (mmap, madvise, munmap), not the decoy's" \
	"${nwr:-0}" 6 12
if [ "$uo" -gt $((2 * hi)) ]; then
	fcheck "mmap_lock_hold PID filter: read-phase max (${rmax} us) below the decoy's munmap (${uo} us)" "$rmax < $uo"
else
	skip "mmap_lock_hold PID filter: read-phase max below the decoy's munmap" \
		"the decoy's $dmib MiB munmap took ${uo} us, not more than twice the target's ${hi} us (TCG timing); the counts above still check the filter"
fi
for h in write_hold_us read_hold_us downgrade_write_phase_us downgrade_read_phase_us; do
	n=$(hist_count "$out" "$h")
	check "mmap_lock_hold prints @$h ($n holds)" [ "$n" -ge 1 ]
done
check "mmap_lock_hold END clears its scratch maps" bash -c "! grep -qE '^@(wstart|rstart|wphase)\\[' '$out'"
finish
