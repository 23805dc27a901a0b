# tests/tools/munmapsnoop_lib.sh: helpers for the munmapsnoop*.guest.sh tests
# (sourced after tests/lib.sh).
SNOOP=$TOP/bpf/munmapsnoop
PY=/usr/bin/python3
SYSCTL_MODE=/proc/sys/vm/munmap_lock_mode
SYSCTL_BYTES=/proc/sys/vm/munmap_section_bytes
MAPBIN=

# snoop_setup NAME: output directory $d, the workload binary $MAPBIN.
snoop_setup() {
	d=$(test_out "$1")
	if [ -x "$TESTBIN/munmapsnoop_map" ]; then
		MAPBIN=$TESTBIN/munmapsnoop_map
	else
		MAPBIN=/tmp/munmapsnoop_map
		cc -O2 -Wall -o "$MAPBIN" "$TOP/tests/tools/munmapsnoop_map.c" -lpthread 2>"$d/cc.err" ||
			MAPBIN=
	fi
	if [ ! -x "$SNOOP" ] || [ -z "$MAPBIN" ]; then
		fail "munmapsnoop and its workload are built: bpf/munmapsnoop='$SNOOP' workload='$MAPBIN' (make tools)"
		finish
	fi
	[ -w "$SYSCTL_MODE" ] && orig_mode=$(cat "$SYSCTL_MODE")
	[ -w "$SYSCTL_BYTES" ] && orig_bytes=$(cat "$SYSCTL_BYTES")
	trap snoop_restore EXIT
}

snoop_restore() {
	[ -n "${orig_mode:-}" ] && echo "$orig_mode" >"$SYSCTL_MODE"
	[ -n "${orig_bytes:-}" ] && echo "$orig_bytes" >"$SYSCTL_BYTES"
	return 0
}

have_modes() { [ -w "$SYSCTL_MODE" ]; }
set_mode() { have_modes && echo "$1" >"$SYSCTL_MODE"; }

# traced_call NAME [SNOOP_ARGS...] -- [WORKLOAD_ARGS...]
# Starts the workload gated, then munmapsnoop -j -p PID SNOOP_ARGS (without
# -p when SNOOP_NOPID=1: then it is stopped with SIGINT afterwards), opens
# the gate and waits for both. Leaves $d/NAME.json (tool stdout),
# $d/NAME.err (tool stderr), $d/NAME.map (workload line); sets MAP_PID,
# MAP_RC, SNOOP_RC, and MAP_LEN / MAP_ELAPSED / MAP_FAULT_MAX /
# MAP_FAULTS_DURING from the line.
traced_call() {
	local name=$1 sargs=() fifo spid
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	fifo=$(mktemp -u /tmp/munmapsnoop-gate.XXXXXX)	# no FIFOs on 9p
	mkfifo "$fifo" || return 1
	"$MAPBIN" -g "$@" <"$fifo" >"$d/$name.map" 2>"$d/$name.map.err" &
	local mpid=$!
	exec 9>"$fifo"
	MAP_PID= MAP_RC=99 SNOOP_RC=99 MAP_LEN= MAP_ELAPSED= MAP_FAULT_MAX= MAP_FAULTS_DURING=
	if ! wait_for "$d/$name.map" '^ready' 240 "$mpid"; then
		exec 9>&-
		rm -f "$fifo"
		kill "$mpid" 2>/dev/null; wait "$mpid"
		return 1
	fi
	MAP_PID=$(awk '/^ready/ {print $2}' "$d/$name.map")
	if [ "${SNOOP_NOPID:-0}" = 1 ]; then
		"$SNOOP" -j "${sargs[@]}" >"$d/$name.json" 2>"$d/$name.err" &
	else
		"$SNOOP" -j -p "$MAP_PID" "${sargs[@]}" >"$d/$name.json" 2>"$d/$name.err" &
	fi
	spid=$!
	if ! wait_for "$d/$name.err" '^Tracing' 240 "$spid"; then
		echo "munmapsnoop did not start; stderr:" >&2; cat "$d/$name.err" >&2
	fi
	echo go >&9
	exec 9>&-
	rm -f "$fifo"
	wait "$mpid"; MAP_RC=$?
	if [ "${SNOOP_NOPID:-0}" = 1 ]; then
		sleep 0.5
		kill -INT "$spid" 2>/dev/null
	fi
	# a detach waits for RCU grace periods (over 60 s seen under TCG on a
	# busy host)
	exit_within "$spid" 300 "$d/$name.err" munmapsnoop
	wait "$spid"; SNOOP_RC=$?
	MAP_LEN=$(sed -n 's/.* len=\([0-9]*\) .*/\1/p' "$d/$name.map")
	MAP_ELAPSED=$(sed -n 's/.* elapsed_ns=\([0-9]*\) .*/\1/p' "$d/$name.map")
	MAP_FAULT_MAX=$(sed -n 's/.* fault_max_ns=\([0-9]*\) .*/\1/p' "$d/$name.map")
	MAP_FAULTS_DURING=$(sed -n 's/.* faults_during=\([0-9]*\).*/\1/p' "$d/$name.map")
	return 0
}

# jfield FILE OP LEN KEY...: the KEYs of the first JSON line with this op and
# len (booleans as true/false), space-separated; nothing if none.
jfield() {
	"$PY" - "$@" <<'EOF'
import json, os, sys
if not os.path.exists(sys.argv[1]):
    sys.exit(0)
f, op, ln, keys = sys.argv[1], sys.argv[2], int(sys.argv[3] or -1), sys.argv[4:]
for line in open(f):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if o.get("op") == op and o.get("len") == ln:
        print(" ".join(("true" if o[k] else "false") if isinstance(o[k], bool)
                       else str(o[k]) for k in keys))
        break
EOF
}

# Figures line for the report: "# NAME: total=.. write=.. read=.. ..."
figures() {
	"$PY" - "$@" <<'EOF'
import json, os, sys
if not os.path.exists(sys.argv[1]):
    sys.exit(0)
f, name, op, ln = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4] or -1)
for line in open(f):
    o = json.loads(line)
    if o["op"] == op and o["len"] == ln:
        us = lambda k: "%.1f" % (o[k] / 1e3)
        print("# %s: op=%s len_mib=%.0f total_us=%s write_hold_us=%s read_hold_us=%s "
              "unmap_region_us=%s downgraded=%s mode=%s sections=%d lock_drops=%d "
              "waiters=%d wait_us=%s max_wait_us=%s" % (
              name, o["op"], o["len"] / 2**20, us("total_ns"), us("write_hold_ns"),
              us("read_hold_ns"), us("unmap_region_ns"), str(o["downgraded"]).lower(),
              o["mode"], o["sections"], o["lock_drops"], o["waiters"], us("wait_ns"),
              us("max_wait_ns")))
        break
EOF
}
