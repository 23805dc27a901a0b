#!/usr/bin/env bash
# tests/tools/wait_rate_loop.sh [SESSIONS [HOLDS]]: measure the reader
# windows of tests/tools/mmlockstat_accuracy.icount.sh (W_WAIT, W_WOKE).
# SESSIONS times (default 20), mmlockstat -n 64 -s follows mmls_hold -r 2000
# over HOLDS write holds (default 3) of 20, 21, ... ms, as that file's wait
# section does; per hold it prints the reader's lateness on its deadline,
# its own pread - the tool's wait (W_WAIT) and its pread's end - the
# module's unlock (W_WOKE), each less the interrupts the session traced in
# one interval only, then the min-max of each (docs/TEST-RATES.md):
#   scripts/vm-run [--kernel K] --icount --cpus 1 --mem 3G -- \
#       tests/tools/wait_rate_loop.sh 20 3
# Outputs in test-out/wait-rate/ (MMLOCK_TEST_OUT/wait-rate/ if set).
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mmls_lib.sh"
# read by mmls_lib.sh (attaching takes guest minutes under icount)
# shellcheck disable=SC2034
TOOL_ATTACH_S=3000 TOOL_STOP_S=3000 TOOL=$TOP/bpf/mmlockstat HOLD=$TESTBIN/mmls_hold
MMLS_IRQS=1
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
	# each less the interrupts in one interval only (mmlockstat_check.py
	# --irqs, as the file's checks): the windows are of those figures
	sed -n 's/^req=\([^ ]*\) .*reader_late_ns=\(-*[0-9]*\)$/\1 late \2/p' "$out/s$r.hold" |
		tee -a "$out/samples.txt"
	$CHECK waits "$out/s$r.json" "$out/s$r.hold" --lo -1000000000 --hi 1000000000 \
		--irqs "$out/s$r.irqs" --record "$out/samples.txt" W_WAIT
	$CHECK woke "$out/s$r.hold" --lo -1000000000 --hi 1000000000 \
		--irqs "$out/s$r.irqs" --record "$out/samples.txt" W_WOKE
done
$PY - "$out/samples.txt" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
late = [int(r[2]) for r in rows if len(r) == 3 and r[1] == "late"]
for name, v in (("late", late),
                ("W_WAIT", [int(x) for r in rows if r[0] == "W_WAIT" for x in r[1:]]),
                ("W_WOKE", [int(x) for r in rows if r[0] == "W_WOKE" for x in r[1:]])):
    v.sort()
    if v:
        print("%s: n=%d, %d-%d, median %d" % (name, len(v), v[0], v[-1], v[len(v) // 2]))
PY
