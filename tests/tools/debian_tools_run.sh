#!/usr/bin/env bash
# tests/tools/debian_tools_run.sh OUTDIR: run in a guest booted on one of
# Debian's kernels by tests/tools/debian-kernels.host.sh (not a test file
# itself). Runs munmapsnoop over a 64 MiB munmap and mmlockstat --full over
# an exec chain, and leaves their output in OUTDIR for the host's checks.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
o=${1:?usage: debian_tools_run.sh OUTDIR}
mkdir -p "$o"
uname -r >"$o/uname"
bin=$top/tests/bin

# wait_line FILE REGEX PID: until FILE has a line matching REGEX (60 s)
wait_line() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# munmapsnoop: the workload's 64 MiB munmap
"$top/bpf/munmapsnoop" -j -c munmapsnoop_map >"$o/snoop.json" 2>"$o/snoop.err" &
sp=$!
if wait_line "$o/snoop.err" 'Hit Ctrl-C' "$sp"; then
	"$bin/munmapsnoop_map" -s 64 >"$o/map.out" 2>&1
	echo $? >"$o/map.rc"
fi
kill -INT "$sp" 2>/dev/null
wait "$sp"
echo $? >"$o/snoop.rc"

# mmlockstat --full -p: an exec chain of 200 execs and the exit
fifo=$(mktemp -u /tmp/go.XXXXXX)
mkfifo "$fifo"
"$bin/mmls_exec" 200 <"$fifo" >"$o/exec.out" 2>&1 &
xp=$!
exec 3>"$fifo"
rm -f "$fifo"
if wait_line "$o/exec.out" '^ready' "$xp"; then
	"$top/bpf/mmlockstat" --full -j -p "$xp" >"$o/mmls.json" 2>"$o/mmls.err" &
	mp=$!
	wait_line "$o/mmls.err" 'Hit Ctrl-C' "$mp"
	echo go >&3
	exec 3>&-
	wait "$xp"
	echo $? >"$o/exec.rc"
	kill -INT "$mp" 2>/dev/null
	wait "$mp"
	echo $? >"$o/mmls.rc"
else
	exec 3>&-
	kill "$xp"
fi
exit 0
