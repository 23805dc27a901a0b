#!/usr/bin/env bash
# tests/tools/vma_rate_loop.sh [N]: in a guest booted on Debian's 6.12, run
# the mmls_vma scene of tests/tools/debian_tools_run.sh N times (default 20)
# under mmlockstat -p, and print per run what the host's 6.12 checks in
# tests/tools/debian-kernels.host.sh look at (docs/TEST-RATES.md):
#   scripts/vm-run --kernel debian-6.12 -- tests/tools/vma_rate_loop.sh 20
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mmls_lib.sh"
n=${1:-20}
out=$TOP/test-out/vma-rate
mkdir -p "$out"
modprobe test_mmap_lock || exit 1
for i in $(seq "$n"); do
	gated_start "vma$i" "$TESTBIN/mmls_vma" -g 200 || { echo "run $i: mmls_vma not ready"; continue; }
	if tool_start "t$i" "$out/vma$i.json" "$out/vma$i.err" "$TOP/bpf/mmlockstat" -j -p "$GATED_PID"; then
		gated_go
		wait "$GATED_PID"
		tool_stop "t$i"
	else
		gated_abort
	fi
	echo "run $i: $(grep -E "^(fresh|warm|mprotect|thp)_ns|^thp_attempts|^mprotect_overlap" "$out/vma$i.hold" | tr '\n' ' ')" \
		"$($PY -c 'import json,sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
h = o["histograms"]
print("fallback_wait", h["vma_fallback_wait"]["count"], h["vma_fallback_wait"]["max"],
      "vma_write_wait", h["vma_write_wait"]["count"], h["vma_write_wait"]["max"])' "$out/vma$i.json" 2>&1)"
done
