#!/usr/bin/env bash
# munmapsnoop --min-us: calls shorter than the threshold are filtered out in
# the kernel, longer ones kept. The filter compares a duration, so this
# runs under `scripts/vm-run --icount --cpus 1` (guest time counts
# instructions: a call's duration does not move with host load).
#
# Two sessions with the same two calls, a 1 MiB and a 64 MiB munmap:
# without the filter both are traced (the positive control: the tool sees
# the small call and times it below the threshold), with --min-us MIN_US
# the large one is kept and the small one is not.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/munmapsnoop_lib.sh"
# Bounds in guest seconds: under icount an idle vCPU (waiting for 9p, for an
# RCU grace period) jumps guest time to the next timer, so attaching and
# detaching, seconds of host time, read up to 154 s and 236 s here.
TOOL_ATTACH_S=3000 TOOL_STOP_S=3000
# Threshold between the two calls' durations (munmapsnoop total_ns).
# Measured under `scripts/vm-run --icount --cpus 1 -- bash
# /tmp/meas-tools/minus.sh` (one -c session, 21 pairs of workload calls)
# plus one run of this file by `tests/run -k tests/tools/`, kernel 6.1 +
# 0001-0003, 2026-12-04: 1 MiB n=22, 216957-220601 ns; 64 MiB n=22,
# 13195639-14413799 ns. 2000 us sits 9x above the one and 6.6x below the
# other: a filter that read the threshold in ns or in ms, or compared
# another field, fails one of the two checks.
MIN_US=2000
SMALL=1 LARGE=64
N_ALL=4 N_MIN=3
plan $((N_ALL + N_MIN))
snoop_setup munmapsnoop-minus

# session NAME [SNOOP-ARGS...]: munmapsnoop -j -c munmapsnoop_map while the
# small and the large workload munmap, one after the other; sets SPID LPID
session() {
	local name=$1
	shift
	SPID= LPID=
	map_start "$name-small" -s $SMALL && SPID=$MAP_PID &&
		map_start "$name-large" -s $LARGE && LPID=$MAP_PID &&
		tool_start "$name" "$d/$name.json" "$d/$name.err" "$SNOOP" -j -c munmapsnoop_map "$@" ||
		{ map_wait "$name-small"; map_wait "$name-large"; return 1; }
	map_wait "$name-small"
	map_wait "$name-large"
	tool_stop "$name"
}

if session all; then
	check_eq "no filter: the tool exited 0 on SIGINT" "$TOOL_RC" 0
	pycheck "no filter: the $LARGE MiB munmap is traced" \
		get "$d/all.json" munmap $((LARGE << 20)) --pid "$LPID" total_ns
	pycheck "no filter: the $SMALL MiB munmap is traced" \
		get "$d/all.json" munmap $((SMALL << 20)) --pid "$SPID" total_ns
	ts=$($SCHECK get "$d/all.json" munmap $((SMALL << 20)) --pid "$SPID" total_ns)
	tl=$($SCHECK get "$d/all.json" munmap $((LARGE << 20)) --pid "$LPID" total_ns)
	echo "# durations: $SMALL MiB ${ts} ns, $LARGE MiB ${tl} ns, threshold $((MIN_US * 1000)) ns"
	check "no filter: the threshold $MIN_US us lies between the two calls (${ts} ns, ${tl} ns)" \
		test "${ts:-x}" -lt $((MIN_US * 1000)) -a "${tl:-0}" -ge $((MIN_US * 1000))
else
	fail_n $N_ALL "no filter: the workloads and the tool started: $(tail -n 2 "$d/all.err" 2>/dev/null | tr '\n' ' ')"
fi

if session min --min-us "$MIN_US"; then
	check_eq "--min-us $MIN_US: the tool exited 0 on SIGINT" "$TOOL_RC" 0
	pycheck "--min-us $MIN_US: the $LARGE MiB munmap is kept" \
		get "$d/min.json" munmap $((LARGE << 20)) --pid "$LPID" total_ns
	pycheck "--min-us $MIN_US: the $SMALL MiB munmap (same session) is filtered out" \
		absent "$d/min.json" "$SPID" "--min-us $MIN_US"
else
	fail_n $N_MIN "--min-us: the workloads and the tool started: $(tail -n 2 "$d/min.err" 2>/dev/null | tr '\n' ' ')"
fi
finish
