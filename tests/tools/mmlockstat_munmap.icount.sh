#!/usr/bin/env bash
# mmlockstat_munmap.icount.sh: mmlockstat on real munmap() calls (no module
# needed). A populated 4 KiB-page mapping is unmapped by tests/bin/mmls_hold
# after a go signal; mmlockstat -p follows that process. The tool's phases
# are compared with the process's own timing of the syscall (wall_ns), two
# clocks of one guest: this runs under `scripts/vm-run --icount --cpus 1`.
# - downgrade: one downgraded hold; the write phase is the VMA detach
#   (microseconds: < 10 % of the call), the read phase the page zap; the
#   syscall's own time minus both phases is the lock acquisition, the
#   syscall entry and exit and the probes: a window measured below.
# - --full gives the same phases, the read phase ending at the
#   mmap_lock_released tracepoint instead of do_mas_munmap's return.
# - exclusive: no downgrade, one write hold; the call minus the hold in a
#   measured window.
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mmls_lib.sh"
# Bounds in guest seconds: under icount an idle vCPU (waiting for 9p, for an
# RCU grace period) jumps guest time to the next timer, so attaching and
# detaching, seconds of host time, read up to 154 s and 236 s here.
TOOL_ATTACH_S=3000 TOOL_STOP_S=3000

TOOL=$TOP/bpf/mmlockstat
HOLD=$TESTBIN/mmls_hold
MIB=128
out=$(test_out mmlockstat_munmap)
SPREAD=$out/spread.txt
rm -f "$SPREAD"
# wall_ns - (write phase + read phase), ns: the min-max measured, widened
# by MARGIN. Measured under `scripts/vm-run --icount --cpus 1 --mem 6G --
# bash /tmp/meas-tools/mun.sh`: one session per case with 20 munmaps of
# 110, 112, ..., 148 MiB (distinct sizes, so that each hold pairs with its
# own call; the difference grows by 26 ns per 2 MiB), plus one run of this
# file by `tests/run -k tests/tools/`; kernel 6.1 + 0001-0003, 2026-12-04.
# The first munmap of a session (this file's only one) reads ~6 us more:
# cold caches (default 16175 and 16182, exclusive 15733 and 15611).
MARGIN=2000
W_DEFAULT="9627 16182"	# n=21, 9627-16182
W_FULL="8919 9663"	# n=21, 8919-9663
W_EXCL="9260 15733"	# wall_ns - write hold: n=21, 9260-15733
N_DG=7 N_EX=4
plan $((2 * N_DG + N_EX))
[ -x "$TOOL" ] || abort "bpf/mmlockstat is built (make tools)"
[ -x "$HOLD" ] || abort "tests/bin/mmls_hold is built (make -C tests/tools)"

wall() { sed -n 's/.* wall_ns=\([0-9]*\).*/\1/p' "$out/$1.hold" | head -n1; }
# rest NAME LABEL VALUE WINDOW: VALUE within WINDOW (MARGIN added)
rest() {
	local lo hi
	read -r lo hi <<<"$4"
	echo "$2 $3" >>"$SPREAD"
	check_range "$1" "$3" $((lo - MARGIN)) $((hi + MARGIN))
}

set_mode downgrade || echo "set_mode downgrade failed" >&2
for mode in default full; do
	args=; W=$W_DEFAULT
	[ $mode = full ] && args=--full && W=$W_FULL
	if ! mmls_run "dg_$mode" "$args" "munmap:$MIB"; then
		for ((i = 0; i < N_DG; i++)); do
			fail "$mode: mmlockstat ran (exit ${MMLS_RC:-none}): $(tail -n 2 "$out/dg_$mode.err" | tr '\n' ' ')"
		done
		continue
	fi
	w=$(wall "dg_$mode")
	wp=$(get "dg_$mode" 'o["histograms"]["downgrade_write_phase"]["max"]')
	rp=$(get "dg_$mode" 'o["histograms"]["downgrade_read_phase"]["max"]')
	echo "# $mode: munmap $MIB MiB took $w ns: write phase $wp ns, read phase $rp ns" >&2
	check_eq "$mode: one downgraded hold" "$(get "dg_$mode" 'o["histograms"]["downgrade_read_phase"]["count"]')" 1
	check_eq "$mode: one write hold (the munmap's)" "$(get "dg_$mode" 'o["histograms"]["write_hold"]["count"]')" 1
	check_range "$mode: write phase < 10 % of munmap ($w ns)" "$wp" 1 "$((w / 10))"
	check_range "$mode: read phase <= munmap ($w ns)" "$rp" 1 "$w"
	rest "$mode: munmap's own time - write phase - read phase, ns" "$mode" $((w - wp - rp)) "$W"
	check_eq "$mode: top hold is munmap, kind downgrade" \
		"$(get "dg_$mode" 'o["top_holds"][0]["op"] + "/" + o["top_holds"][0]["kind"]')" munmap/downgrade
	check_eq "$mode: no drops, no unended read phase" \
		"$(get "dg_$mode" 'o["drops"]["total"] + o["unended_read_phases"]')" 0
done

if set_mode exclusive && mmls_run excl "" "munmap:$MIB"; then
	w=$(wall excl)
	wh=$(get excl 'o["histograms"]["write_hold"]["max"]')
	# the positive control of "no downgrade": the hold was seen
	check_eq "exclusive: one write hold" "$(get excl 'o["histograms"]["write_hold"]["count"]')" 1
	check_eq "exclusive: no downgrade" "$(get excl 'o["histograms"]["downgrade_write_phase"]["count"]')" 0
	check_range "exclusive: write hold <= munmap ($w ns)" "$wh" 1 "$w"
	rest "exclusive: munmap's own time - write hold, ns" excl $((w - wh)) "$W_EXCL"
else
	for ((i = 0; i < N_EX; i++)); do
		fail "exclusive: mode set and mmlockstat ran (exit ${MMLS_RC:-none}): $(tail -n 2 "$out/excl.err" 2>/dev/null | tr '\n' ' ')"
	done
fi
finish
