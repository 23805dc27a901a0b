#!/usr/bin/python3
"""check_workload.py FILE REPS SIZE_MB FAULT_THREADS SETTLE_MS: FILE is
what `munmap_test -s SIZE_MB -f FAULT_THREADS -c -w -r REPS -d SETTLE_MS -j`
printed: one well-formed JSON object per rep.

TAP (tests/report/taplib.py): one check for the objects (REPS of them, reps
0..REPS-1, one pid, the parameters echoed), then per rep: the munmap window;
every reader kind ran; and per reader kind (fault, cmdline, writer) its
statistics are consistent: p50 <= p99 <= the upper bound of max's fine
bucket (16 per power of two, as munmap_test counts), the log2 buckets sum
to count, max lies in the last one, overlap figures within the totals."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import eq, run, want  # noqa: E402

KINDS = ("fault", "cmdline", "writer")
SUB_BITS = 4


def fine_hi(v):
    """Upper bound of munmap_test's fine bucket of v (bucket_of/bucket_hi)."""
    sub = 1 << SUB_BITS
    if v < sub:
        return v
    msb = v.bit_length() - 1
    b = ((msb - SUB_BITS + 1) << SUB_BITS) + ((v >> (msb - SUB_BITS)) & (sub - 1))
    shift = (b >> SUB_BITS) - 1
    return ((sub + (b & (sub - 1))) << shift) + (1 << shift) - 1


def main(argv):
    path = argv[0]
    reps, size_mb, nfault, settle = (int(x) for x in argv[1:5])
    st = {}

    def objs():
        if "o" not in st:
            with open(path) as f:
                st["o"] = [json.loads(l) for l in f if l.strip()]
        return st["o"]

    def rep(i):
        o = [x for x in objs() if x.get("rep") == i]
        eq("objects with rep %d" % i, len(o), 1)
        return o[0]

    def header():
        os_ = objs()
        eq("objects", len(os_), reps)
        eq("reps", [o["rep"] for o in os_], list(range(reps)))
        eq("pids", len({o["pid"] for o in os_}), 1)
        for o in os_:
            got = (o["schema"], o["tool"], o["size_mb"], o["fault_threads"],
                   o["cmdline_reader"], o["writer"], o["settle_ms"])
            eq("rep %d parameters" % o["rep"], got,
               (1, "munmap_test", size_mb, nfault, True, True, settle))
        return "%d objects" % reps

    def window(i):
        o = rep(i)
        want(0 < o["munmap_start_ns"] < o["munmap_end_ns"], "munmap window",
             (o["munmap_start_ns"], o["munmap_end_ns"]), "0 < start < end")
        eq("munmap_ns", o["munmap_ns"], o["munmap_end_ns"] - o["munmap_start_ns"])
        want(o["mmap_ns"] > 0 and o["populate_ns"] > 0, "mmap_ns, populate_ns",
             (o["mmap_ns"], o["populate_ns"]), "> 0")
        return "munmap %.3f ms" % (o["munmap_ns"] / 1e6)

    def ran(i):
        r = rep(i)["readers"]
        counts = {k: r.get(k, {}).get("count", 0) for k in KINDS}
        want(all(counts.values()), "ops per reader kind", counts, "> 0 each")
        th = rep(i)["threads"]
        eq("threads (fault threads + cmdline + writer)", len(th), nfault + 2)
        for k in KINDS:
            eq("%s ops = sum over its threads" % k, counts[k],
               sum(t["count"] for t in th if t["kind"] == k))
        return ", ".join("%s %d" % kv for kv in counts.items())

    def stats(i, k):
        v = rep(i)["readers"][k]
        hi = fine_hi(v["max"])
        want(v["p50"] <= v["p99"] <= hi, "p50 <= p99 <= fine bucket of max",
             (v["p50"], v["p99"], hi), "ordered")
        b = v["buckets"]
        eq("sum of log2 buckets", sum(x["count"] for x in b), v["count"])
        want((b[-1]["le"] + 1) // 2 <= v["max"] <= b[-1]["le"],
             "max in the last log2 bucket", (v["max"], b[-1]["le"]),
             "(le+1)/2 <= max <= le")
        want(v["max"] <= v["sum"] <= v["count"] * v["max"], "sum",
             v["sum"], "in [max, count*max]")
        want(v["overlap_max"] <= v["max"] and v["overlap_count"] <= v["count"],
             "overlap max, count", (v["overlap_max"], v["overlap_count"]),
             "<= max %d, count %d" % (v["max"], v["count"]))
        return "p50 %d, p99 %d, max %d ns" % (v["p50"], v["p99"], v["max"])

    checks = [("%d JSON objects for -r %d, parameters echoed" % (reps, reps),
               header)]
    for i in range(reps):
        checks += [
            ("rep %d: munmap_start_ns < munmap_end_ns, munmap_ns matches" % i,
             lambda i=i: window(i)),
            ("rep %d: fault, cmdline and writer readers all ran" % i,
             lambda i=i: ran(i)),
        ]
        checks += [("rep %d %s: percentiles, buckets, overlap consistent"
                    % (i, k), lambda i=i, k=k: stats(i, k)) for k in KINDS]
    run(checks)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
