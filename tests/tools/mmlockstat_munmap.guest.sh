#!/usr/bin/env bash
# mmlockstat_munmap.guest.sh: mmlockstat on real munmap() calls (no module
# needed). A populated 4 KiB-page mapping is unmapped by tests/bin/mmls_hold
# after a go signal; mmlockstat -p follows that process.
# - downgrade (the default and 6.1's behaviour): one downgraded hold; the
#   write phase is the VMA detach (microseconds: < 10 % of the call) and the
#   read phase the page zap, which is most of the syscall: between 50 % and
#   100 % of the munmap() wall time measured by the process itself (the
#   syscall also covers the lock acquisition and return).
# - --full gives the same read phase from the mmap_lock_released tracepoint
#   (exact end) as the default mode's kretprobe on do_mas_munmap.
# - exclusive (when the vm.munmap_lock_mode patch is in): no downgrade, one
#   write hold of 50-100 % of the call.
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mmls_lib.sh"

TOOL=$TOP/bpf/mmlockstat
HOLD=$TESTBIN/mmls_hold
CHECK="/usr/bin/python3 $TOP/tests/tools/mmlockstat_check.py"
MIB=${MMLS_MUNMAP_MIB:-128}
out=$(test_out mmlockstat_munmap)
if [ ! -x "$TOOL" ] || [ ! -x "$HOLD" ]; then
	fail "mmlockstat and mmls_hold are built"
	finish
fi

run() { mmls_run "$@"; }
get() { $CHECK get "$out/$1.json" "$2"; }
wall() { sed -n 's/.* wall_ns=\([0-9]*\).*/\1/p' "$out/$1.hold" | head -n1; }

for mode in default full; do
	args=; [ $mode = full ] && args=--full
	run "dg_$mode" "$args" "munmap:$MIB"
	w=$(wall "dg_$mode")
	echo "# $mode: munmap $MIB MiB took $w ns" >&2
	check_range "$mode: one downgraded hold" "$(get "dg_$mode" 'o["histograms"]["downgrade_read_phase"]["count"]')" 1 1
	check_range "$mode: one write hold (the munmap's)" "$(get "dg_$mode" 'o["histograms"]["write_hold"]["count"]')" 1 1
	check_range "$mode: write phase < 10 % of munmap" "$(get "dg_$mode" 'o["histograms"]["downgrade_write_phase"]["max"]')" 1 "$((w / 10))"
	check_range "$mode: read phase 50-100 % of munmap" "$(get "dg_$mode" 'o["histograms"]["downgrade_read_phase"]["max"]')" "$((w / 2))" "$w"
	check "$mode: top hold is munmap, kind downgrade" \
		test "$(get "dg_$mode" 'o["top_holds"][0]["op"] + "/" + o["top_holds"][0]["kind"]')" = munmap/downgrade
	check "$mode: no drops, no unended read phase" \
		test "$(get "dg_$mode" 'o["drops"] + o["unended_read_phases"]')" = 0
done

if [ -w /proc/sys/vm/munmap_lock_mode ]; then
	old=$(cat /proc/sys/vm/munmap_lock_mode)
	echo exclusive >/proc/sys/vm/munmap_lock_mode
	run excl "" "munmap:$MIB"
	echo "$old" >/proc/sys/vm/munmap_lock_mode
	w=$(wall excl)
	check_range "exclusive: no downgrade" "$(get excl 'o["histograms"]["downgrade_write_phase"]["count"]')" 0 0
	check_range "exclusive: write hold 50-100 % of munmap" "$(get excl 'o["histograms"]["write_hold"]["max"]')" "$((w / 2))" "$w"
else
	skip "exclusive mode" "no vm.munmap_lock_mode (patch 0001 not applied)"
fi
finish
