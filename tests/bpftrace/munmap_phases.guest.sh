#!/usr/bin/env bash
# bpf/bpftrace/munmap_phases.bt compiles, attaches and, on a 256 MiB
# populated munmap (4 KiB pages) with a /proc/self/cmdline reader and an
# mprotect writer, prints a per-call line whose phases fit the mode:
#   downgrade: total >= unmap_region, read-hold ~ unmap_region, short write;
#   exclusive: write-hold ~ total, no read phase;
#   section:   several write holds in the one call.
# One bpftrace session covers all modes (it takes 10-30 s to attach under
# TCG); exclusive and section are skipped when vm.munmap_lock_mode is absent.
. "$(dirname "$0")/bt_lib.sh"
d=$(test_out bpftrace-munmap_phases)
out=$d/bpftrace.out

off=$(bt_mmoff)
if [[ ${off:-} =~ ^[0-9]+$ ]] && [ "$off" -gt 0 ]; then
	ok "offsetof(struct mm_struct, mmap_lock) = $off from BTF"
else
	fail "offsetof(struct mm_struct, mmap_lock) from BTF: pahole gave '${off:-nothing}'"
	off=0
fi

if ! bt_start munmap_phases "$out" 0 "$off"; then
	fail "munmap_phases.bt compiles and attaches: $(tail -n 3 "$out" | tr '\n' ' ')"
	finish
fi
ok "munmap_phases.bt compiles and attaches"

modes=(downgrade exclusive section)
for m in "${modes[@]}"; do
	if [ "$m" != downgrade ] && ! have_modes; then
		continue
	fi
	set_mode "$m" || fail "set vm.munmap_lock_mode=$m"
	"$BT_W" -s 256 -w >"$d/workload-$m.out" 2>&1 || fail "bt_munmap ($m) exited $?"
done
set_mode downgrade
sleep 1	# let the last lines through the perf buffer
bt_stop
cp "$out" "$d/munmap_phases.txt"

for m in "${modes[@]}"; do
	if [ "$m" != downgrade ] && ! have_modes; then
		skip "munmap_phases in $m mode" "no vm.munmap_lock_mode in this kernel"
		continue
	fi
	wl=$(grep '^bt_munmap pid=' "$d/workload-$m.out")
	pid=$(kv " $wl" pid)
	uus=$(kv " $wl" munmap_us)
	if [ -z "$pid" ]; then
		fail "munmap_phases $m: the workload printed no result ($(tail -n 2 "$d/workload-$m.out" | tr '\n' ' '))"
		continue
	fi
	close=$(grep -E "bt_munmap-$pid +\[" "$out" | grep ' len=268435456 ' | tail -n1)
	ur=$(grep -E "bt_munmap-$pid +\[" "$out" | grep 'unmap_region();' | tail -n1)
	if [ -z "$close" ] || [ -z "$ur" ]; then
		fail "munmap_phases $m: a __vm_munmap line and an unmap_region line for pid $pid, len 256 MiB"
		continue
	fi
	ok "munmap_phases $m: per-call lines for the 256 MiB munmap of pid $pid"
	total=$(sed -n 's/.*: *\([0-9.]*\) us |  }.*/\1/p' <<<"$close")
	unmap=$(sed -n 's/.*: *\([0-9.]*\) us |    unmap_region();.*/\1/p' <<<"$ur")
	write=$(kv "$close" write)
	holds=$(sed -n 's/.* write=[0-9.]*us\/\([0-9]*\) .*/\1/p' <<<"$close")
	read=$(kv "$close" read)
	mode=$(kvs "$close" mode)
	waiters=$(kv "$close" waiters)
	echo "# $m: total=$total unmap_region=$unmap write=$write/$holds read=$read mode=$mode waiters=$waiters userspace=${uus}us" >&2
	fcheck "munmap_phases $m: total ($total us) >= unmap_region ($unmap us)" "$total >= $unmap"
	fcheck "munmap_phases $m: total ($total us) within the munmap() the workload timed ($uus us)" \
		"$total <= $uus + 1000 && $total >= $uus / 2"
	case $m in
	downgrade)
		check "munmap_phases downgrade: mode=downgrade (got $mode)" [ "$mode" = downgrade ]
		fcheck "munmap_phases downgrade: read-hold ($read us) ~ unmap_region ($unmap us): unmap_region <= read <= total" \
			"$read >= $unmap && $read <= $total"
		fcheck "munmap_phases downgrade: write-hold ($write us) < 10% of total ($total us)" "$write < $total / 10"
		check "munmap_phases downgrade: the mprotect writer queued behind the read phase (waiters=$waiters)" \
			[ "${waiters:-0}" -ge 1 ]
		;;
	exclusive)
		check "munmap_phases exclusive: mode=exclusive (got $mode)" [ "$mode" = exclusive ]
		fcheck "munmap_phases exclusive: write-hold ($write us) ~ total ($total us): >= 90% and >= unmap_region" \
			"$write >= 0.9 * $total && $write >= $unmap"
		fcheck "munmap_phases exclusive: no read phase (read=$read us)" "$read == 0"
		;;
	section)
		check "munmap_phases section: mode=section (got $mode)" [ "$mode" = section ]
		check "munmap_phases section: several write holds in one call (got ${holds:-none})" [ "${holds:-0}" -ge 2 ]
		;;
	esac
done

for h in total_us unmap_region_us write_hold_us; do
	n=$(hist_count "$out" "$h")
	check "munmap_phases prints @$h at exit ($n calls)" [ "$n" -ge 1 ]
done
check "munmap_phases END clears its scratch maps (no @start/@wsum printed)" \
	bash -c "! grep -qE '^@(start|wsum|rsum|len|active)\\[' '$out'"
finish
