#!/usr/bin/env bash
# munmapsnoop vs ftrace function_graph, for the same calls: the trace of
# commit dd2283f2605e (__vm_munmap() { unmap_region(); }) recorded with
# the function_graph tracer (set_ftrace_filter = __vm_munmap unmap_region,
# trace_clock mono, set_ftrace_pid on the workload) while munmapsnoop -p
# traces the same process. Two clocks of the same guest: this runs under
# `scripts/vm-run --icount --cpus 1`, where guest time counts instructions
# and host load cannot move them apart.
# kernels: debian-6.1 debian-6.12
# On Debian's kernels (no patch 0001) every call is a downgrade (a 160 MiB
# one takes the exclusive call's place). On 6.12 munmap zaps in
# vms_clear_ptes(), inlined there: function_graph traces its three steps
# (unmap_vmas free_pgtables tlb_finish_mmu), whose sum munmapsnoop reports
# as unmap_region_ns (fentry/fexit on the same three).
#
# Per call, three windows (ns), each the min-max measured per kernel
# (figures beside them), widened by MARGIN and, in a call where an
# interrupt came at the edge of a traced function, by what it cost (the
# irq and irq_vectors events of the workload, in the same trace: an
# interrupt between two tracers' hooks counts in one of them only; see
# funcgraph_irqs in munmapsnoop_check.py):
#  - the zap: munmapsnoop (kprobe/kretprobe on unmap_region; on 6.12
#    fentry/fexit on the three steps) - function_graph (graph hooks on the
#    same entries and returns);
#  - __vm_munmap: function_graph's hooks run outside the BPF trampoline that
#    times munmapsnoop's total, so graph - total >= 0;
#  - the workload's own timing of the syscall encloses both: workload -
#    graph >= 0 (an interrupt between its clock reads, t0_ns/t1_ns on the
#    trace's mono clock, and __vm_munmap's hooks counts for it only).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/munmapsnoop_lib.sh"
# Bounds in guest seconds: under icount an idle vCPU (waiting for 9p, for an
# RCU grace period) jumps guest time to the next timer, so attaching and
# detaching, seconds of host time, read up to 154 s and 236 s here.
TOOL_ATTACH_S=3000 TOOL_STOP_S=3000
T=/sys/kernel/tracing
SPREAD=
# Measured: 6 runs of this file (4 calls each: n=24 per window), five by
# `scripts/vm-run --icount --cpus 1 -- bash -c 'for i in 1 2 3 4 5; do
# MMLOCK_TEST_OUT=/tmp/meas-tools/out/ft$i bash
# tests/tools/munmapsnoop_ftrace.icount.sh; done'`, one by `tests/run -k
# tests/tools/`; kernel 6.1 + 0001-0003, 2026-12-04. Debian's kernels: 3
# runs each (n=12) by `scripts/vm-run --kernel K --icount --cpus 1 --mem 3G
# -- bash -c 'for i in 1 2 3; do MMLOCK_KERNEL=K MMLOCK_TEST_OUT=/tmp/ft$i
# bash tests/tools/munmapsnoop_ftrace.icount.sh; done'`, 2026-12-05: 3
# runs, not 20, because each window's spread there was 8-45 ns, as on the
# lab kernel (MARGIN is 2 us).
MARGIN=2000
ZAP=unmap_region
# calls: NAME MODE MiB
CALLS=("fg-dg-64 downgrade 64" "fg-dg-128 downgrade 128" "fg-dg-96 downgrade 96"
       "fg-ex-128 exclusive 128")
case ${MMLOCK_KERNEL:-lab} in
lab)
	W_UR="1459 1468"	# munmapsnoop - function_graph, unmap_region: n=24, 1459-1468
	W_VM="3111 3119"	# function_graph __vm_munmap - munmapsnoop total: n=24, 3111-3119
	W_WL="11155 11210"	# workload's syscall time - function_graph __vm_munmap: n=24, 11155-11210
	;;
debian-6.1)
	W_UR="1484 1492"	# n=12, 1484-1492
	W_VM="3493 3501"	# n=12, 3493-3501
	W_WL="12172 12216"	# n=12, 12172-12216
	;;
debian-6.12)
	ZAP="unmap_vmas free_pgtables tlb_finish_mmu"
	# Negative: the three fexit trampolines run inside the graph hooks.
	W_UR="-3560 -3552"	# n=12, -3560 to -3552
	W_VM="3399 3409"	# n=12, 3399-3409
	W_WL="13286 13331"	# n=12, 13286-13331
	;;
esac
stock_kernel && CALLS=("${CALLS[@]:0:3}" "fg-dg-160 downgrade 160")
PER_CALL=4
plan $((1 + ${#CALLS[@]} * PER_CALL))
snoop_setup munmapsnoop-ftrace
SPREAD=$d/spread.txt
rm -f "$SPREAD"
check "function_graph tracer available in $T" grep -qw function_graph "$T/available_tracers"

ftrace_off() {
	echo 0 >"$T/tracing_on"
	echo nop >"$T/current_tracer"
	echo 0 >"$T/events/enable"
	echo >"$T/set_event_pid"
	echo 0 >"$T/options/funcgraph-abstime"
	echo >"$T/set_ftrace_filter"
	echo >"$T/set_ftrace_pid"
	echo local >"$T/trace_clock"
}
at_exit ftrace_off

# within WHAT LABEL VALUE WINDOW IRQ_NS: VALUE in the window, MARGIN and
# the interrupts' IRQ_NS added
within() {
	local lo hi
	read -r lo hi <<<"$4"
	echo "$2 $3" >>"$SPREAD"
	check_range "$1" "$3" $((lo - MARGIN - $5)) $((hi + MARGIN + $5))
}

# agree NAME MODE MIB: one traced call, compared (PER_CALL checks)
agree() {
	local name=$1 mode=$2 mib=$3 ur vm iur ivm iwl irqs irq= tur total vals fg fgbad= vbad=
	if ! stock_kernel && ! set_mode "$mode"; then
		fail_n $PER_CALL "$name: vm.munmap_lock_mode=$mode set"
		return
	fi
	ftrace_off
	echo >"$T/trace"
	echo mono >"$T/trace_clock"
	if ! echo "__vm_munmap $ZAP" >"$T/set_ftrace_filter"; then
		fail_n $PER_CALL "$name: set_ftrace_filter takes __vm_munmap $ZAP"
		return
	fi
	echo function_graph >"$T/current_tracer"
	echo 1 >"$T/options/funcgraph-tail"
	echo 1 >"$T/options/funcgraph-abstime"
	echo 1 >"$T/events/irq/enable"
	echo 1 >"$T/events/irq_vectors/enable"
	if ! map_start "$name" -s "$mib"; then
		map_wait "$name"
		fail_n $PER_CALL "$name: the workload got ready"
		return
	fi
	echo "$MAP_PID" >"$T/set_ftrace_pid"
	echo "$MAP_PID" >"$T/set_event_pid"
	echo 1 >"$T/tracing_on"
	tool_start "$name" "$d/$name.json" "$d/$name.err" "$SNOOP" -j -p "$MAP_PID"
	map_wait "$name"
	tool_stop "$name" none
	echo 0 >"$T/tracing_on"
	cp "$T/trace" "$d/$name.trace"
	# shellcheck disable=SC2086
	fg=$($SCHECK funcgraph --wl "${MAP_T0:-0}" "${MAP_T1:-0}" "$d/$name.trace" $ZAP 2>&1) || fgbad=1
	vals=$($SCHECK get "$d/$name.json" munmap "${MAP_LEN:-0}" unmap_region_ns total_ns 2>&1) || vbad=1
	if [ -z "${fgbad:-}${vbad:-}" ] && [ -n "${MAP_ELAPSED:-}" ]; then
		ok "$name: function_graph, munmapsnoop and the workload timed the call"
	else
		fail "$name: function_graph, munmapsnoop and the workload timed the call: function_graph '$fg', munmapsnoop '$vals' (exit $TOOL_RC), workload '${MAP_ELAPSED:-none}' (exit $MAP_RC)"
		fail_n $((PER_CALL - 1)) "$name: no figures to compare"
		return
	fi
	read -r ur vm iur ivm iwl irqs <<<"$fg"
	[ "$irqs" = - ] || irq=" (interrupts at the edges: $irqs; ns allowed: zap $iur, __vm_munmap $ivm, workload $iwl)"
	read -r tur total <<<"$vals"
	echo "# $name: mode=$mode len_mib=$mib funcgraph zap_ns=$ur ($ZAP) __vm_munmap_ns=$vm munmapsnoop unmap_region_ns=$tur total_ns=$total workload_syscall_ns=$MAP_ELAPSED irqs=$irqs"
	within "$name ($mode, $mib MiB): the zap ($ZAP), munmapsnoop $tur - function_graph $ur, ns$irq" \
		"$name/UR" $((tur - ur)) "$W_UR" "$iur"
	within "$name ($mode, $mib MiB): __vm_munmap, function_graph $vm - munmapsnoop total $total, ns$irq" \
		"$name/VM" $((vm - total)) "$W_VM" "$ivm"
	within "$name ($mode, $mib MiB): the workload's syscall time $MAP_ELAPSED - function_graph __vm_munmap $vm, ns$irq" \
		"$name/WL" $((MAP_ELAPSED - vm)) "$W_WL" "$iwl"
}

for c in "${CALLS[@]}"; do
	# shellcheck disable=SC2086
	agree $c
done
finish
