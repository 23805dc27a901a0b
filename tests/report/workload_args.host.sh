#!/usr/bin/env bash
# munmap_test: bad parameters give one clear line and exit 2; a small real
# run prints one well-formed JSON object per rep. Plain userspace: host-safe.
. "$(dirname "$0")/../lib.sh"
mt=$TOP/workloads/bin/munmap_test
out=$(test_out report-args)
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
# what it is given | its arguments
BAD=(
	"size larger than MemAvailable|-s $((avail + 1024))"
	"zero fault threads|-f 0"
	"garbage size|-s 12abc"
	"negative reps|-r -1"
	"zero reps|-r 0"
	"unknown option|-Z"
	"missing value|-s"
	"stray argument|-s 16 extra"
)
plan $((${#BAD[@]} + 4))
make -s -C "$TOP/workloads" >/dev/null || abort "build workloads"

for b in "${BAD[@]}"; do	# exit status 2 and exactly one line on stderr
	what=${b%%|*}
	# shellcheck disable=SC2086 # the arguments split on purpose
	"$mt" ${b#*|} >"$out/stdout" 2>"$out/stderr"
	rc=$? n=$(wc -l <"$out/stderr")
	if [ "$rc" = 2 ] && [ "$n" = 1 ] && [ ! -s "$out/stdout" ]; then
		ok "rejects $what: $(cat "$out/stderr")"
	else
		fail "rejects $what: exit $rc, $n stderr line(s), $(wc -c <"$out/stdout") bytes on stdout (want 2, 1, 0): $(head -c 200 "$out/stderr")"
	fi
done
"$mt" -s $((avail + 1024)) >/dev/null 2>"$out/stderr"
check "size error names MemAvailable" grep -q "MemAvailable" "$out/stderr"

"$mt" -h >"$out/help" 2>&1
check "-h exits 0 with examples" grep -q '^Examples:' "$out/help"

"$mt" -s 32 -f 1 -c -w -r 2 -d 50 -j >"$out/run.jsonl" 2>"$out/run.err"
check_eq "small run (-s 32 -f 1 -c -w -r 2 -d 50 -j) exits 0" "$?" 0
subtest "the small run's JSON" "$PY" "$TOP/tests/report/check_workload.py" "$out/run.jsonl" 2 32 1 50
finish
