#!/usr/bin/env bash
# tests/tools/wait_rate_loop.sh [SESSIONS [HOLDS]]: measure the reader
# windows of tests/tools/mmlockstat_accuracy.icount.sh (W_WAIT, W_WOKE).
# SESSIONS times (default 20), mmlockstat -n 64 -s follows mmls_hold -r 2000
# over HOLDS write holds (default 3) of 20, 21, ... ms, as that file's wait
# section does; per hold it prints the reader's lateness on its deadline,
# its own pread - the tool's wait (W_WAIT) and its pread's end - the
# module's unlock (W_WOKE), then the min-max of each (docs/TEST-RATES.md):
#   scripts/vm-run [--kernel K] --icount --cpus 1 --mem 3G -- \
#       tests/tools/wait_rate_loop.sh 20 3
# Outputs in test-out/wait-rate/ (MMLOCK_TEST_OUT/wait-rate/ if set).
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mmls_lib.sh"
# read by mmls_lib.sh (attaching takes guest minutes under icount)
# shellcheck disable=SC2034
TOOL_ATTACH_S=3000 TOOL_STOP_S=3000 TOOL=$TOP/bpf/mmlockstat HOLD=$TESTBIN/mmls_hold
sessions=${1:-20} nholds=${2:-3}
out=${MMLOCK_TEST_OUT:-$TOP/test-out}/wait-rate
mkdir -p "$out" || exit 1
[ -d /sys/kernel/debug/test_mmap_lock ] || modprobe test_mmap_lock || exit 1
holds=()
for ((i = 0; i < nholds; i++)); do holds+=("write:$((20000 + i * 1000))"); done
rm -f "$out/samples.txt"
for r in $(seq "$sessions"); do
	if ! mmls_run "s$r" "-n 64 -s" -r 2000 "${holds[@]}"; then
		echo "session $r: $(tail -n 2 "$out/s$r.err" | tr '\n' ' ')"
		continue
	fi
	# holds differ by 1 ms: sorting pairs each wait with its own pread
	$PY - "$out/s$r.json" "$out/s$r.hold" <<'PY' | tee -a "$out/samples.txt"
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
tool = sorted(w["wait_ns"] for w in o["top_waits"] if w["type"] == "read")
rows = [dict(kv.split("=", 1) for kv in l.split())
        for l in open(sys.argv[2]) if l.startswith("req=")]
rows.sort(key=lambda r: int(r["reader_ns"]))
if len(tool) != len(rows):
    print("session %s: %d waits for %d holds" % (sys.argv[1], len(tool), len(rows)))
for t, r in zip(tool, rows):
    own, at, un = int(r["reader_ns"]), int(r["reader_at_ns"]), int(r["unlocked_at_ns"])
    print("%s late %s wait %d woke %d" % (r["req"], r["reader_late_ns"], own - t, at + own - un))
PY
done
$PY - "$out/samples.txt" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.startswith("write:")]
for i, name in ((2, "late"), (4, "W_WAIT"), (6, "W_WOKE")):
    v = sorted(int(r[i]) for r in rows)
    if v:
        print("%s: n=%d, %d-%d, median %d" % (name, len(v), v[0], v[-1], v[len(v) // 2]))
PY
