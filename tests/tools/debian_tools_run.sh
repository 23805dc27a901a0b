#!/usr/bin/env bash
# tests/tools/debian_tools_run.sh OUTDIR: run in a guest booted on one of
# Debian's kernels by tests/tools/debian-kernels.host.sh (not a test file
# itself: no plan, no checks). Runs munmapsnoop over a 64 MiB munmap and
# over CPython freeing a 512 MiB buffer, and mmlockstat over tests/bin/
# mmls_vma (page faults during a calibration write hold, a huge-page fault
# beside an mprotect) with the tests' own helpers (tool_start/tool_stop,
# gated_start/gated_go), and leaves their output and exit statuses in
# OUTDIR for the host's checks.
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

# A real program: CPython frees a 512 MiB buffer it filled
# (glibc munmaps it), under munmapsnoop and mmlockstat at once
if tool_start snoopy "$out/py.json" "$out/py.err" "$TOP/bpf/munmapsnoop" -j -c python3 &&
   tool_start pymmls "$out/pymmls.json" "$out/pymmls.err" "$TOP/bpf/mmlockstat" -j -n 64 -c python3; then
	python3 -c 'b = bytearray(b"x") * (512 << 20); del b' >"$out/py.out" 2>&1
	echo $? >"$out/py.rc"
fi
tool_stop snoopy
echo "$TOOL_RC" >"$out/pysnoop.rc"
tool_stop pymmls
echo "$TOOL_RC" >"$out/pymmls.rc"

# mmlockstat -p over mmls_vma: the calibration module holds 200 ms
if modprobe test_mmap_lock 2>"$out/modprobe.err" &&
   gated_start vma "$TESTBIN/mmls_vma" -g 200; then
	if tool_start vmals "$out/vma.json" "$out/vma.err" "$TOP/bpf/mmlockstat" -j -p "$GATED_PID"; then
		gated_go
		wait "$GATED_PID"
		echo $? >"$out/vma.rc"
		tool_stop vmals
		echo "$TOOL_RC" >"$out/vmals.rc"
	else
		gated_abort
	fi
fi
exit 0
