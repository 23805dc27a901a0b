#!/usr/bin/env bash
# bpf/bpftrace/mmap_lock_hold.bt compiles, attaches, honours its PID filter,
# and splits a downgraded munmap into a short write phase and a read phase
# as long as the munmap; in exclusive mode the write hold is the munmap.
#
# One session, PID-filtered on a bt_munmap that maps and populates 64 MiB
# twice (iteration 0 in downgrade mode, iteration 1 in exclusive mode when
# vm.munmap_lock_mode exists). Before that, another process unmaps 256 MiB:
# had the filter let it through, the read-phase maximum would be ~4x the
# target's munmap.
. "$(dirname "$0")/bt_lib.sh"
d=$(test_out bpftrace-mmap_lock_hold)
out=$d/bpftrace.out
go=/tmp/bt-hold-go
rm -f "$go"
off=$(bt_mmoff)

"$BT_W" -s 64 -n 2 -g "$go" >"$d/target.out" 2>&1 &
wl=$!
if ! bt_wait "$d/target.out" 'ready pid=.* iter=0' 30 "$wl"; then
	fail "bt_munmap -g did not get ready: $(tr '\n' ' ' <"$d/target.out")"
	finish
fi
pid=$(sed -n 's/^ready pid=\([0-9]*\).*/\1/p' "$d/target.out" | head -n1)

if ! bt_start mmap_lock_hold "$out" "$pid" "${off:-0}"; then
	fail "mmap_lock_hold.bt compiles and attaches: $(tail -n 3 "$out" | tr '\n' ' ')"
	kill "$wl"
	finish
fi
ok "mmap_lock_hold.bt compiles and attaches (PID $pid, mmap_lock at mm+${off:-0})"

"$BT_W" -s 256 -R >"$d/other.out" 2>&1 || fail "bt_munmap (other process) exited $?"
set_mode downgrade
touch "$go"
bt_wait "$d/target.out" 'ready pid=.* iter=1' 600 "$wl"
mode1=downgrade
have_modes && mode1=exclusive
set_mode "$mode1"
touch "$go"
wait "$wl" || fail "bt_munmap (target) exited $?"
set_mode downgrade
sleep 1
bt_stop
cp "$out" "$d/mmap_lock_hold.txt"

u0=$(kv " $(grep 'iter=0 len' "$d/target.out")" munmap_us)
u1=$(kv " $(grep 'iter=1 len' "$d/target.out")" munmap_us)
uo=$(kv " $(grep 'len' "$d/other.out")" munmap_us)
echo "# munmap_us: target iter0=$u0 iter1($mode1)=$u1 other(256 MiB)=$uo" >&2
if [ -z "$u0" ] || [ -z "$u1" ]; then
	fail "mmap_lock_hold: the target workload printed its results: $(tr '\n' ' ' <"$d/target.out")"
	finish
fi

statcount() { sed -n "s/^@hold_ns\[$1\]: count \([0-9]*\),.*/\1/p" "$out" | head -n1; }
maxus() { local v; v=$(map_val "$out" hold_max_ns "$1"); echo $((${v:-0} / 1000)); }

rmax=$(maxus downgrade_read_phase)
wmax=$(maxus write)
dgw=$(maxus downgrade_write_phase)
ndg=$(statcount downgrade_write_phase)
nrd=$(statcount read)
nwr=$(statcount write)
echo "# read phase max ${rmax}us, write max ${wmax}us, downgrade write phase max ${dgw}us; counts: downgrades=$ndg reads=$nrd writes=$nwr" >&2

if [ "$mode1" = exclusive ]; then
	ndg_want=1 lo=$u0 hi=$u0
	fcheck "mmap_lock_hold exclusive: write-hold max (${wmax} us) ~ the exclusive munmap (${u1} us)" \
		"$wmax >= $u1 / 2 && $wmax <= $u1 + 1000"
else
	skip "mmap_lock_hold exclusive: write-hold max ~ munmap" "no vm.munmap_lock_mode in this kernel"
	ndg_want=2 lo=$((u0 < u1 ? u0 : u1)) hi=$((u0 > u1 ? u0 : u1))
fi
fcheck "mmap_lock_hold downgrade: read-phase max (${rmax} us) ~ the downgraded munmap (${lo}..${hi} us), not the other process's (${uo} us)" \
	"$rmax >= $lo / 2 && $rmax <= $hi + 1000"
fcheck "mmap_lock_hold downgrade: write phase (max ${dgw} us) < 10% of the munmap (${lo} us)" "$dgw < $lo / 10"
check "mmap_lock_hold: one downgrade per downgraded munmap of the target (want $ndg_want, got ${ndg:-none})" \
	[ "${ndg:-0}" = "$ndg_want" ]
# Populating 2 x 64 MiB with 4 KiB pages faults 32768 times; each fault
# holds the lock for read (mmap_read_trylock) once.
check "mmap_lock_hold: read holds include every page fault (>= 32768, got ${nrd:-none})" [ "${nrd:-0}" -ge 32768 ]
check "mmap_lock_hold: write holds >= the 2 munmaps + 2 mmaps of the target (got ${nwr:-none})" [ "${nwr:-0}" -ge 4 ]
for h in write_hold_us read_hold_us downgrade_write_phase_us downgrade_read_phase_us; do
	n=$(hist_count "$out" "$h")
	check "mmap_lock_hold prints @$h ($n holds)" [ "$n" -ge 1 ]
done
check "mmap_lock_hold END clears its scratch maps" bash -c "! grep -qE '^@(wstart|rstart|downgraded)\\[' '$out'"
finish
