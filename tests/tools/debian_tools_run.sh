#!/usr/bin/env bash
# tests/tools/debian_tools_run.sh OUTDIR: run in a guest booted on one of
# Debian's kernels by tests/tools/debian-kernels.host.sh (not a test file
# itself: no plan, no checks). Runs munmapsnoop over a 64 MiB munmap and
# mmlockstat --full over an exec chain with the tests' own helpers
# (tool_start/tool_stop, gated_start/gated_go), and leaves their output and
# exit statuses in OUTDIR for the host's checks.
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mmls_lib.sh"
out=${1:?usage: debian_tools_run.sh OUTDIR}
mkdir -p "$out"
uname -r >"$out/uname"

# munmapsnoop: the workload's 64 MiB munmap
if tool_start snoop "$out/snoop.json" "$out/snoop.err" "$TOP/bpf/munmapsnoop" -j -c munmapsnoop_map; then
	"$TESTBIN/munmapsnoop_map" -s 64 >"$out/map.out" 2>&1
	echo $? >"$out/map.rc"
fi
tool_stop snoop
echo "$TOOL_RC" >"$out/snoop.rc"

# mmlockstat --full -p: an exec chain of 200 execs and the exit
if gated_start exec "$TESTBIN/mmls_exec" 200; then
	if tool_start mmls "$out/mmls.json" "$out/mmls.err" "$TOP/bpf/mmlockstat" --full -j -p "$GATED_PID"; then
		gated_go
		wait "$GATED_PID"
		echo $? >"$out/exec.rc"
		tool_stop mmls
		echo "$TOOL_RC" >"$out/mmls.rc"
	else
		gated_abort
	fi
fi
exit 0
