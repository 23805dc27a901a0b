# tests/tools/munmapsnoop_lib.sh: helpers for the munmapsnoop tests (sourced
# after tests/lib.sh, after `plan`).
SNOOP=$TOP/bpf/munmapsnoop
MAPBIN=$TESTBIN/munmapsnoop_map
SCHECK="$PY $TOP/tests/tools/munmapsnoop_check.py"
declare -A MAP_JOBS=() MAP_FDS=()

# snoop_setup NAME: output directory $d; aborts if the tool or the workload
# is not built.
snoop_setup() {
	d=$(test_out "$1")
	[ -x "$SNOOP" ] || abort "bpf/munmapsnoop is built (make tools)"
	[ -x "$MAPBIN" ] || abort "tests/bin/munmapsnoop_map is built (make -C tests/tools)"
}

# pycheck WHAT CHECK-ARGS...: one check by munmapsnoop_check.py
pycheck() {
	local what=$1 msg
	shift
	if msg=$($SCHECK "$@" 2>&1); then ok "$what: $msg"; else fail "$what: $msg"; fi
}

# map_start NAME WORKLOAD-ARGS...: start munmapsnoop_map -g (gated: it
# prepares, prints "ready PID" and waits) with output in $d/NAME.map; sets
# MAP_PID. Returns 1 if it did not get ready.
map_start() {
	local name=$1 fifo fd
	shift
	fifo=$(mktemp -u /tmp/munmapsnoop-gate.XXXXXX)	# no FIFOs on 9p
	mkfifo "$fifo" || return 1
	"$MAPBIN" -g "$@" <"$fifo" >"$d/$name.map" 2>"$d/$name.map.err" &
	MAP_JOBS[$name]=$!
	exec {fd}>"$fifo"
	MAP_FDS[$name]=$fd
	rm -f "$fifo"
	MAP_PID=
	if ! wait_for "$d/$name.map" '^ready' "$TOOL_ATTACH_S" "${MAP_JOBS[$name]}"; then
		echo "map_start: $name not ready: $(head -n 2 "$d/$name.map.err")" >&2
		map_go "$name"
		return 1
	fi
	MAP_PID=$(awk '/^ready/ {print $2}' "$d/$name.map")
}

# map_go NAME: open the gate of workload NAME
map_go() {
	local fd=${MAP_FDS[$1]:-}
	[ -n "$fd" ] || return 0
	echo go >&"$fd"
	exec {fd}>&-
	unset "MAP_FDS[$1]"
}

# map_wait NAME: wait for workload NAME; sets MAP_RC and, from its line,
# MAP_PID MAP_LEN MAP_ELAPSED MAP_T0 MAP_T1 MAP_FAULT_MAX MAP_FAULTS_DURING
# (empty if none)
map_wait() {
	local name=$1 f=$d/$1.map
	MAP_RC=
	[ -n "${MAP_JOBS[$name]:-}" ] || return 1
	map_go "$name"
	wait "${MAP_JOBS[$name]}"
	MAP_RC=$?
	unset "MAP_JOBS[$name]"
	MAP_PID=$(awk '/^ready/ {print $2}' "$f")
	MAP_LEN=$(sed -n 's/.* len=\([0-9]*\) .*/\1/p' "$f")
	MAP_ELAPSED=$(sed -n 's/.* elapsed_ns=\([0-9]*\) .*/\1/p' "$f")
	MAP_T0=$(sed -n 's/.* t0_ns=\([0-9]*\) .*/\1/p' "$f")
	MAP_T1=$(sed -n 's/.* t1_ns=\([0-9]*\) .*/\1/p' "$f")
	MAP_FAULT_MAX=$(sed -n 's/.* fault_max_ns=\([0-9]*\) .*/\1/p' "$f")
	MAP_FAULTS_DURING=$(sed -n 's/.* faults_during=\([0-9]*\).*/\1/p' "$f")
	[ "$MAP_RC" = 0 ] || echo "map_wait: $name exit $MAP_RC: $(head -n 2 "$d/$name.map.err")" >&2
}

# map_call NAME WORKLOAD-ARGS...: one gated workload run to its end (start,
# go, wait), e.g. inside a running tool session. Returns 1 if it failed.
map_call() {
	local name=$1
	shift
	map_start "$name" "$@" || return 1
	map_wait "$name"
	[ "$MAP_RC" = 0 ]
}

# traced_call NAME [SNOOP-ARGS...] -- [WORKLOAD-ARGS...]: one workload call
# traced by its own session: the workload gets ready, `munmapsnoop -j -p PID
# SNOOP-ARGS` attaches (tool_start), the gate opens, and the tool exits by
# itself once the process is gone (tool_stop none). Leaves $d/NAME.json
# (tool stdout), $d/NAME.err, $d/NAME.map; sets SNOOP_RC and MAP_*.
# Returns 1 if the workload or the tool failed to start or run.
traced_call() {
	local name=$1 sargs=() rc=0
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	SNOOP_RC=
	map_start "$name" "$@" || { map_wait "$name"; return 1; }
	tool_start "$name" "$d/$name.json" "$d/$name.err" "$SNOOP" -j -p "$MAP_PID" "${sargs[@]}" || rc=1
	map_wait "$name"
	tool_stop "$name" none || rc=1
	SNOOP_RC=$TOOL_RC
	[ "$MAP_RC" = 0 ] && [ "$SNOOP_RC" = 0 ] || rc=1
	return $rc
}
