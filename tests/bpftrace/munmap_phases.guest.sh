#!/usr/bin/env bash
# bpf/bpftrace/munmap_phases.bt compiles, attaches and, on 256 MiB populated
# munmaps (4 KiB pages) with a /proc/self/cmdline reader and an mprotect
# writer thread next to them, prints per-call lines whose phases fit the
# mode:
#   downgrade: total >= unmap_region, read-hold ~ unmap_region, short write;
#   exclusive: write-hold ~ total, no read phase;
#   section:   several write holds in the one call (the writer's waiting
#              makes the kernel drop the lock between 16 MiB sections).
# One bpftrace session (it takes 10-30 s to attach under TCG), PID-filtered
# on one bt_munmap that does one iteration per mode (-g: the test sets the
# mode between iterations); exclusive and section are skipped when
# vm.munmap_lock_mode is absent. With the PID filter every call the maps
# count must also have its line: @calls equals the lines printed.
. "$(dirname "$0")/bt_lib.sh"
d=$(test_out bpftrace-munmap_phases)
out=$d/bpftrace.out
go=/tmp/bt-phases-go
rm -f "$go"

off=$(bt_mmoff)
if [[ ${off:-} =~ ^[0-9]+$ ]] && [ "$off" -gt 0 ]; then
	ok "offsetof(struct mm_struct, mmap_lock) = $off from BTF"
else
	fail "offsetof(struct mm_struct, mmap_lock) from BTF: pahole gave '${off:-nothing}'"
	off=0
fi

modes=(downgrade)
have_modes && modes+=(exclusive section)
bt_target "$d/workload.out" -s 256 -w -n "${#modes[@]}" -g "$go" || finish
wl=$BT_WL pid=$BT_TPID

if ! bt_start munmap_phases "$out" "$pid" "$off"; then
	fail "munmap_phases.bt compiles and attaches: $(tail -n 3 "$out" | tr '\n' ' ')"
	kill "$wl"
	finish
fi
ok "munmap_phases.bt compiles and attaches (PID $pid)"

for i in "${!modes[@]}"; do
	wait_for "$d/workload.out" "ready pid=.* iter=$i" 600 "$wl" || break
	set_mode "${modes[$i]}" || fail "set vm.munmap_lock_mode=${modes[$i]}"
	touch "$go"
done
wait "$wl" || fail "bt_munmap exited $?"
set_mode downgrade
bt_stop
bt_stopped munmap_phases.bt || finish
cp "$out" "$d/munmap_phases.txt"

# The lines of call i: the i-th "__vm_munmap() {" block of the target.
grep -E "bt_munmap-$pid +\[" "$out" | grep -E 'unmap_region\(\);|len=268435456 ' >"$d/calls.txt"
for m in downgrade exclusive section; do
	have_modes || [ "$m" = downgrade ] || skip "munmap_phases in $m mode" "no vm.munmap_lock_mode in this kernel"
done
for i in "${!modes[@]}"; do
	m=${modes[$i]}
	wl=$(grep "^bt_munmap pid=$pid iter=$i " "$d/workload.out")
	uus=$(kv " $wl" munmap_us)
	if [ -z "$uus" ]; then
		fail "munmap_phases $m: the workload printed no result for iteration $i ($(tail -n 2 "$d/workload.out" | tr '\n' ' '))"
		continue
	fi
	close=$(grep ' len=268435456 ' "$d/calls.txt" | sed -n "$((i + 1))p")
	ur=$(awk -v n=$((i + 1)) '/len=268435456 / { c++; if (c == n) { print prev; exit } } { prev = $0 }' "$d/calls.txt")
	if [ -z "$close" ] || ! grep -q 'unmap_region();' <<<"$ur"; then
		fail "munmap_phases $m: a __vm_munmap line and an unmap_region line for call $((i + 1)) of pid $pid, len 256 MiB"
		continue
	fi
	ok "munmap_phases $m: per-call lines for the 256 MiB munmap of pid $pid"
	total=$(sed -n 's/.*: *\([0-9.]*\) us |  }.*/\1/p' <<<"$close")
	unmap=$(sed -n 's/.*: *\([0-9.]*\) us |    unmap_region();.*/\1/p' <<<"$ur")
	ucalls=$(sed -n 's/.*unmap_region(); \/\* x\([0-9]*\) .*/\1/p' <<<"$ur")
	write=$(kv "$close" write)
	holds=$(sed -n 's/.* write=[0-9.]*us\/\([0-9]*\) .*/\1/p' <<<"$close")
	read=$(kv "$close" read)
	mode=$(kvs "$close" mode)
	waiters=$(kv "$close" waiters)
	echo "# $m: total=$total unmap_region=$unmap/x$ucalls write=$write/$holds read=$read mode=$mode waiters=$waiters userspace=${uus}us" >&2
	fcheck "munmap_phases $m: total ($total us) >= unmap_region ($unmap us)" "$total >= $unmap"
	# Inside the munmap() the workload timed (+1 ms for its clock reads).
	# No lower bound: the workload's own figure also holds the time its
	# thread waited for a CPU after the syscall (CI: 62.5 ms traced of
	# 82.8 ms timed while the test's polling ran; single-threaded TCG can
	# leave a vCPU waiting up to 100 ms); total >= unmap_region above is
	# the check that the tracer saw the call's work.
	fcheck "munmap_phases $m: total ($total us) within the munmap() the workload timed ($uus us)" \
		"$total <= $uus + 1000"
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
		# 16 sections, 17 when the mapping does not start on a 16 MiB boundary
		check_range "munmap_phases section: one unmap_region per 16 MiB section" "${ucalls:-0}" 16 17
		;;
	esac
done

nlines=$(grep -cE '^ *[^ ].*-[0-9]+ +\[[0-9]+\] .*\|  } /\* len=' "$out")
ncalls=$(map_sum "$out" calls)
check "munmap_phases: a line for every call counted in @calls (lines $nlines, @calls $ncalls, want ${#modes[@]})" \
	[ "$nlines.$ncalls" = "${#modes[@]}.${#modes[@]}" ]
for h in total_us unmap_region_us write_hold_us; do
	n=$(hist_count "$out" "$h")
	check "munmap_phases prints @$h at exit ($n calls)" [ "$n" = "${#modes[@]}" ]
done
check "munmap_phases END clears its scratch maps (no @start/@wsum printed)" \
	bash -c "! grep -qE '^@(start|wsum|rsum|len|active)\\[' '$out'"
finish
