#!/usr/bin/env bash
# tests/tools/modes_rate_loop.sh [N]: in a guest, run munmapsnoop_modes.guest.sh
# N times (default 20), one record per run in test-out/modes-rate/RUN/ (the
# false-failure rate in docs/TEST-RATES.md):
#   scripts/vm-run --mem 3G -- tests/tools/modes_rate_loop.sh 20
cd "$(dirname "$0")/../.." || exit 2
out=$PWD/test-out/modes-rate
n=${1:-20}
for i in $(seq "$n"); do
	MMLOCK_TEST_OUT=$out/$i tests/run-files lab tests/tools/munmapsnoop_modes.guest.sh
	echo "run $i: exit $(cat "$out/$i/tap/lab:tests_tools_munmapsnoop_modes.guest.sh.rc" 2>/dev/null), $(grep -c "^not ok" "$out/$i/tap/lab:tests_tools_munmapsnoop_modes.guest.sh.tap" 2>/dev/null) failed checks"
done
