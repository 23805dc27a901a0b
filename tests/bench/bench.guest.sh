#!/usr/bin/env bash
# bench.guest.sh: the overhead benchmark's machinery, on a tiny configuration
# (nothing attached vs the bpftrace fentry read-side counter, 2 repetitions).
# Its plan: structure only, nothing timed can fail it. It checks that the
# table and JSON are produced, that the runs alternate off / traced as
# asked, that each figure agrees with what it is derived from (ns/fault,
# faults/s), that the ratios are the medians' ratios of this one run, and
# that the tracer's own event count was parsed (tests/bench/bench_check.py).
# The figures themselves (one rep's ns/fault was 4x the next one's under
# TCG) are printed, not asserted: the goals are `make bench`'s. A guest
# file: tests/run runs it in the guest only.
. "$(dirname "$0")/../lib.sh"
reps=2 config=bpftrace-fentry-read
files=(table.md results.json runs.jsonl meta.json)
# faultbench, bench-guest's exit, one per file, the JSON checks.
plan $((1 + 1 + ${#files[@]} + 1))
out=$(test_out bench)
rm -rf "$out/run"

fb=$TOP/workloads/bin/faultbench
if [ -x "$fb" ]; then
	ok "faultbench is built ($fb)"
else
	# `make workloads` builds it; without it, build one here.
	fb=$out/faultbench
	check "build faultbench (workloads/bin/faultbench missing)" cc -O2 -pthread -o "$fb" "$TOP/workloads/faultbench.c"
fi

FAULTBENCH=$fb "$TOP/scripts/bench-guest" --out "$out/run" --reps "$reps" \
	--configs "$config" --variants fault --iters 4 --quiet \
	>"$out/stdout" 2>"$out/stderr"
check_eq "bench-guest exits 0 (stderr: $out/stderr)" "$?" 0
for f in "${files[@]}"; do
	check "bench-guest wrote $f" [ -s "$out/run/$f" ]
done
SUBTEST_ERR=$out/bench_check.err
subtest "bench-guest's results.json, runs.jsonl and table.md agree and are sane" \
	"$PY" "$TOP/tests/bench/bench_check.py" "$out/run" "$reps" "$config"
finish
