#!/usr/bin/env bash
# munmapsnoop vs ftrace function_graph, for the same calls: the trace of
# commit dd2283f2605e (__vm_munmap() { unmap_region(); }) recorded with
# the function_graph tracer (set_ftrace_filter = __vm_munmap unmap_region,
# trace_clock mono) while munmapsnoop traces the same process.
#
# Tolerance for unmap_region: |munmapsnoop - function_graph| <= 1 % of the
# duration + 300 us. Both time the same entry and return (kprobe/kretprobe
# vs the graph hooks, same clock): measured differences are 0.17-0.38 ms on
# 100-300 ms calls under TCG, the order in which the hooks run.
# For __vm_munmap the check is an ordering: munmapsnoop's total (fentry to
# fexit, inside the BPF trampoline) <= function_graph's __vm_munmap (whose
# hooks wrap the trampoline) <= the workload's own timing of the syscall.
# Measured: function_graph sees 0.4-7.7 ms more than munmapsnoop when both
# are attached (0.26-0.32 ms outside unmap_region with function_graph
# alone), time spent around the trampoline, outside the tool's window.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/munmapsnoop_lib.sh"
snoop_setup munmapsnoop-ftrace
T=/sys/kernel/tracing
if [ ! -w "$T/current_tracer" ] || ! grep -qw function_graph "$T/available_tracers"; then
	skip "munmapsnoop agrees with function_graph" "no function_graph tracer in $T"
	finish
fi

ftrace_off() {
	echo 0 >"$T/tracing_on"
	echo nop >"$T/current_tracer"
	echo >"$T/set_ftrace_filter"
	echo >"$T/set_ftrace_pid"
	echo local >"$T/trace_clock"
}
trap 'ftrace_off; snoop_restore' EXIT

# The funcgraph durations of the first __vm_munmap containing unmap_region.
graph_durations() {
	"$PY" - "$1" <<'EOF'
import re, sys
dur = r"[+!#*@$ ]*([0-9]+\.?[0-9]*) us\s*\|"
ur = vm = None
for line in open(sys.argv[1]):
    m = re.search(dur + r"\s*unmap_region\(\);", line)
    if m and ur is None:
        ur = float(m.group(1))
    m = re.search(dur + r"\s*\} /\* __vm_munmap \*/", line)
    if m and ur is not None and vm is None:
        vm = float(m.group(1))
if ur is not None and vm is not None:
    print(int(ur * 1000), int(vm * 1000))
EOF
}

# agree NAME MODE MIB: one traced call, compared.
agree() {
	local name=$1 mode=$2 mib=$3 ur vm total tur
	if [ "$mode" != downgrade ] && ! have_modes; then
		skip "$name: munmapsnoop agrees with function_graph" "no $SYSCTL_MODE"
		return
	fi
	set_mode "$mode"
	ftrace_off
	echo >"$T/trace"
	echo mono >"$T/trace_clock"
	echo '__vm_munmap unmap_region' >"$T/set_ftrace_filter"
	echo function_graph >"$T/current_tracer"
	echo 1 >"$T/options/funcgraph-tail"
	# The pid filter needs the pid: the workload is gated, so set it from
	# a background watcher once the ready line is there.
	(
		wait_for "$d/$name.map" "^ready" 240
		echo "$(awk '/^ready/ {print $2}' "$d/$name.map")" >"$T/set_ftrace_pid"
		echo 1 >"$T/tracing_on"
	) &
	local w=$!
	traced_call "$name" -- -s "$mib"
	wait "$w"
	echo 0 >"$T/tracing_on"
	cp "$T/trace" "$d/$name.trace"
	read -r ur vm <<<"$(graph_durations "$d/$name.trace")"
	read -r tur total <<<"$(jfield "$d/$name.json" munmap "$MAP_LEN" unmap_region_ns total_ns)"
	echo "# $name: mode=$mode len_mib=$mib funcgraph unmap_region_us=$((${ur:-0} / 1000)) __vm_munmap_us=$((${vm:-0} / 1000)) munmapsnoop unmap_region_us=$((${tur:-0} / 1000)) total_us=$((${total:-0} / 1000)) workload_syscall_us=$((${MAP_ELAPSED:-0} / 1000))"
	if [ -z "${ur:-}" ] || [ -z "${tur:-}" ]; then
		fail "$name: both function_graph and munmapsnoop saw the call (funcgraph: ${ur:-none}, munmapsnoop: ${tur:-none})"
		return
	fi
	local diff=$((tur - ur)) tol=$((ur / 100 + 300000))
	diff=${diff#-}
	ncalls=$((ncalls + 1))
	if [ "$diff" -le "$tol" ]; then
		nagree=$((nagree + 1))
		echo "# $name ($mode, $mib MiB): unmap_region agrees: munmapsnoop ${tur} ns vs function_graph ${ur} ns, |diff| $diff <= $tol"
	else
		echo "# $name ($mode, $mib MiB): unmap_region DISAGREES: munmapsnoop ${tur} ns vs function_graph ${ur} ns, |diff| $diff > $tol"
	fi
	# __vm_munmap: function_graph's hooks run outside the BPF trampoline
	# that times munmapsnoop's total, so they enclose it; both lie inside
	# the workload's own timing of the syscall.
	check "$name ($mode, $mib MiB): munmapsnoop total ${total} ns <= function_graph __vm_munmap ${vm} ns + 300 us" \
		[ "$total" -le $((vm + 300000)) ]
	check "$name ($mode, $mib MiB): function_graph __vm_munmap ${vm} ns <= the workload's syscall time ${MAP_ELAPSED} ns" \
		[ "$vm" -le "$MAP_ELAPSED" ]
}

ncalls=0 nagree=0
agree fg-dg-128 downgrade 128
agree fg-dg-256 downgrade 256
agree fg-dg-192 downgrade 192
agree fg-ex-256 exclusive 256
# Under TCG on a shared host a vCPU can stall for 100+ ms at any point;
# once (1 call in 7) such a stall fell between the graph tracer's return
# hook and the kretprobe on unmap_region's return. All but one must agree.
check "unmap_region: munmapsnoop agrees with function_graph in $nagree of $ncalls calls (>= $((ncalls - 1)), >= 2)" \
	[ "$ncalls" -ge 2 -a "$nagree" -ge $((ncalls - 1)) ]
finish
