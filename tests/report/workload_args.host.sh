#!/usr/bin/env bash
# munmap_test: bad parameters give one clear line and exit 2; a small real
# run prints one well-formed JSON object per rep. Plain userspace: host-safe.
. "$(dirname "$0")/../lib.sh"
mt=$TOP/workloads/bin/munmap_test
make -s -C "$TOP/workloads" >/dev/null || { fail "build workloads"; finish; }
out=$(test_out report-args)

bad() {	# bad WHAT ARGS...: exit status 2 and exactly one line on stderr
	local what=$1; shift
	"$mt" "$@" >"$out/stdout" 2>"$out/stderr"
	local rc=$? n
	n=$(wc -l <"$out/stderr")
	if [ "$rc" = 2 ] && [ "$n" = 1 ] && [ ! -s "$out/stdout" ]; then
		ok "rejects $what: $(cat "$out/stderr")"
	else
		fail "rejects $what: exit $rc, $n stderr line(s): $(head -c 200 "$out/stderr")"
	fi
}
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
bad "size larger than MemAvailable" -s $((avail + 1024))
bad "zero fault threads" -f 0
bad "garbage size" -s 12abc
bad "negative reps" -r -1
bad "zero reps" -r 0
bad "unknown option" -Z
bad "missing value" -s
bad "stray argument" -s 16 extra
grep -q "MemAvailable" <("$mt" -s $((avail + 1024)) 2>&1) &&
	ok "size error names MemAvailable" || fail "size error names MemAvailable"

"$mt" -h >"$out/help" 2>&1
check "-h exits 0 with examples" grep -q '^Examples:' "$out/help"

"$mt" -s 32 -f 1 -c -w -r 2 -d 50 -j >"$out/run.jsonl" 2>"$out/run.err"
rc=$?
check "small run (-s 32 -f 1 -c -w -r 2) exits 0" test "$rc" = 0
/usr/bin/python3 - "$out/run.jsonl" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
def check(what, cond):
    print(("ok - " if cond else "not ok - ") + what)
    return cond
good = check("two JSON objects for -r 2", len(objs) == 2)
for o in objs:
    r = o.get("readers", {})
    good &= check("rep %d: munmap_start_ns < munmap_end_ns, munmap_ns matches"
                  % o["rep"], o["munmap_start_ns"] < o["munmap_end_ns"]
                  and o["munmap_end_ns"] - o["munmap_start_ns"] == o["munmap_ns"])
    good &= check("rep %d: fault, cmdline and writer readers all ran"
                  % o["rep"], all(r.get(k, {}).get("count", 0) > 0
                                  for k in ("fault", "cmdline", "writer")))
    for k, v in r.items():
        good &= check("rep %d %s: p50 <= p99 <= max*1.07, buckets sum to count"
                      % (o["rep"], k),
                      v["p50"] <= v["p99"] <= v["max"] * 1.07 + 16
                      and sum(b["count"] for b in v["buckets"]) == v["count"]
                      and v["overlap_max"] <= v["max"])
sys.exit(0 if good else 1)
PY
[ $? = 0 ] || _failed=1
finish
