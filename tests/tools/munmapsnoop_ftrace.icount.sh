#!/usr/bin/env bash
# munmapsnoop vs ftrace function_graph, for the same calls: the trace of
# commit dd2283f2605e (__vm_munmap() { unmap_region(); }) recorded with
# the function_graph tracer (set_ftrace_filter = __vm_munmap unmap_region,
# trace_clock mono, set_ftrace_pid on the workload) while munmapsnoop -p
# traces the same process. Two clocks of the same guest: this runs under
# `scripts/vm-run --icount --cpus 1`, where guest time counts instructions
# and host load cannot move them apart.
#
# Per call, three windows (ns), each the min-max measured over 24 calls
# (figures beside them), widened by MARGIN:
#  - unmap_region: munmapsnoop (kprobe/kretprobe) - function_graph (graph
#    hooks on the same entry and return);
#  - __vm_munmap: function_graph's hooks run outside the BPF trampoline that
#    times munmapsnoop's total, so graph - total >= 0;
#  - the workload's own timing of the syscall encloses both: workload -
#    graph >= 0.
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
# tests/tools/`; kernel 6.1 + 0001-0003, 2026-12-04.
MARGIN=2000
W_UR="1459 1468"	# munmapsnoop - function_graph, unmap_region: n=24, 1459-1468
W_VM="3111 3119"	# function_graph __vm_munmap - munmapsnoop total: n=24, 3111-3119
W_WL="11155 11210"	# workload's syscall time - function_graph __vm_munmap: n=24, 11155-11210
# calls: NAME MODE MiB
CALLS=("fg-dg-64 downgrade 64" "fg-dg-128 downgrade 128" "fg-dg-96 downgrade 96"
       "fg-ex-128 exclusive 128")
PER_CALL=4
plan $((1 + ${#CALLS[@]} * PER_CALL))
snoop_setup munmapsnoop-ftrace
SPREAD=$d/spread.txt
rm -f "$SPREAD"
check "function_graph tracer available in $T" grep -qw function_graph "$T/available_tracers"

ftrace_off() {
	echo 0 >"$T/tracing_on"
	echo nop >"$T/current_tracer"
	echo >"$T/set_ftrace_filter"
	echo >"$T/set_ftrace_pid"
	echo local >"$T/trace_clock"
}
at_exit ftrace_off

# within WHAT LABEL VALUE WINDOW: VALUE in the window, MARGIN added
within() {
	local lo hi
	read -r lo hi <<<"$4"
	echo "$2 $3" >>"$SPREAD"
	check_range "$1" "$3" $((lo - MARGIN)) $((hi + MARGIN))
}

# agree NAME MODE MIB: one traced call, compared (PER_CALL checks)
agree() {
	local name=$1 mode=$2 mib=$3 ur vm tur total vals fg fgbad= vbad=
	if ! set_mode "$mode"; then
		fail_n $PER_CALL "$name: vm.munmap_lock_mode=$mode set"
		return
	fi
	ftrace_off
	echo >"$T/trace"
	echo mono >"$T/trace_clock"
	echo '__vm_munmap unmap_region' >"$T/set_ftrace_filter"
	echo function_graph >"$T/current_tracer"
	echo 1 >"$T/options/funcgraph-tail"
	if ! map_start "$name" -s "$mib"; then
		map_wait "$name"
		fail_n $PER_CALL "$name: the workload got ready"
		return
	fi
	echo "$MAP_PID" >"$T/set_ftrace_pid"
	echo 1 >"$T/tracing_on"
	tool_start "$name" "$d/$name.json" "$d/$name.err" "$SNOOP" -j -p "$MAP_PID"
	map_wait "$name"
	tool_stop "$name" none
	echo 0 >"$T/tracing_on"
	cp "$T/trace" "$d/$name.trace"
	fg=$($SCHECK funcgraph "$d/$name.trace" 2>&1) || fgbad=1
	vals=$($SCHECK get "$d/$name.json" munmap "${MAP_LEN:-0}" unmap_region_ns total_ns 2>&1) || vbad=1
	if [ -z "${fgbad:-}${vbad:-}" ] && [ -n "${MAP_ELAPSED:-}" ]; then
		ok "$name: function_graph, munmapsnoop and the workload timed the call"
	else
		fail "$name: function_graph, munmapsnoop and the workload timed the call: function_graph '$fg', munmapsnoop '$vals' (exit $TOOL_RC), workload '${MAP_ELAPSED:-none}' (exit $MAP_RC)"
		fail_n $((PER_CALL - 1)) "$name: no figures to compare"
		return
	fi
	read -r ur vm <<<"$fg"
	read -r tur total <<<"$vals"
	echo "# $name: mode=$mode len_mib=$mib funcgraph unmap_region_ns=$ur __vm_munmap_ns=$vm munmapsnoop unmap_region_ns=$tur total_ns=$total workload_syscall_ns=$MAP_ELAPSED"
	within "$name ($mode, $mib MiB): unmap_region, munmapsnoop $tur - function_graph $ur, ns" \
		"$name/UR" $((tur - ur)) "$W_UR"
	within "$name ($mode, $mib MiB): __vm_munmap, function_graph $vm - munmapsnoop total $total, ns" \
		"$name/VM" $((vm - total)) "$W_VM"
	within "$name ($mode, $mib MiB): the workload's syscall time $MAP_ELAPSED - function_graph __vm_munmap $vm, ns" \
		"$name/WL" $((MAP_ELAPSED - vm)) "$W_WL"
}

for c in "${CALLS[@]}"; do
	# shellcheck disable=SC2086
	agree $c
done
finish
