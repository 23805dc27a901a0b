#!/usr/bin/python3
"""check_summary.py REPORTDIR: every number in summary.md's tables equals
(to its printed precision) the raw JSON it came from. Independent of
scripts/render_report.py on purpose. Prints ok/not ok lines."""
import json
import math
import os
import re
import sys

UNITS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}
failed = 0


def ok(msg):
    print("ok - " + msg)


def fail(msg):
    global failed
    failed = 1
    print("not ok - " + msg)


def parse_dur(cell):
    """'29.43 ms' -> (value_ns, half of the last printed digit in ns)."""
    m = re.fullmatch(r"([0-9.]+) (ns|µs|ms|s)", cell.strip())
    if not m:
        return None, None
    num, unit = m.groups()
    dec = len(num.split(".")[1]) if "." in num else 0
    half = 0.5 * 10 ** -dec * UNITS[unit]
    if unit == "ns":
        half = 1  # printed truncated
    return float(num) * UNITS[unit], half


def table(md, heading):
    sec = md.split("## " + heading, 1)
    if len(sec) < 2:
        return None
    lines = [l for l in sec[1].split("\n## ", 1)[0].splitlines()
             if l.startswith("|")]
    if len(lines) < 2:
        return []
    cells = lambda l: [c.strip() for c in l.strip().strip("|").split(" | ")]
    head = cells(lines[0])
    return [dict(zip(head, cells(l))) for l in lines[2:]]


def jsonl(path):
    try:
        with open(path) as f:
            return [json.loads(l) for l in f if l.strip()]
    except OSError:
        return []


def same(what, cell, want):
    got, half = parse_dur(cell)
    if got is None:
        fail("%s: cell '%s' is not a duration" % (what, cell))
        return 0
    if abs(got - want) > half + 1e-9 * want:
        fail("%s: summary says %s, JSON says %d ns" % (what, cell, want))
        return 0
    return 1


def tool_hist(objs, name):
    hs = [o["histograms"][name] for o in objs
          if name in o.get("histograms", {})]
    nz = [h for h in hs if h.get("count")]
    if len(nz) <= 1:
        h = (nz or hs)[-1]
        return h["count"], h.get("p50"), h.get("p99"), h.get("max")
    count = sum(h["count"] for h in nz)
    bk = {}
    for h in nz:
        for b in h["buckets"]:
            bk[b["le"]] = bk.get(b["le"], 0) + b["count"]

    def q(p):
        acc, want = 0, max(1, math.ceil(p * count))
        for le in sorted(bk):
            acc += bk[le]
            if acc >= want:
                return le
    return count, q(0.5), q(0.99), max(h["max"] for h in nz)


def main(rep):
    raw = os.path.join(rep, "raw")
    md = open(os.path.join(rep, "summary.md")).read()
    n = 0
    rows = table(md, "Lock hold and wait (mmlockstat)") or []
    for r in rows:
        objs = jsonl(os.path.join(raw, r["mode"], "mmlockstat.jsonl"))
        c, p50, p99, mx = tool_hist(objs, r["histogram"])
        w = "%s/%s" % (r["mode"], r["histogram"])
        if int(r["count"]) != c:
            fail("%s count: summary %s, JSON %d" % (w, r["count"], c))
        n += 1
        n += same(w + " p50", r["p50"], p50) + same(w + " p99", r["p99"], p99)
        n += same(w + " max", r["max"], mx)
    rows = table(md, "Userspace-measured latency") or []
    for r in rows:
        objs = jsonl(os.path.join(raw, r["mode"], "workload.jsonl"))
        o = [x for x in objs if x.get("rep") == int(r["rep"])][0]
        w = "%s rep %s" % (r["mode"], r["rep"])
        n += same(w + " munmap", r["munmap"], o["munmap_ns"])
        n += same(w + " populate", r["populate"], o["populate_ns"])
        for k, v in o.get("readers", {}).items():
            n += same("%s %s max" % (w, k), r[k + " max"], v["max"])
            n += same("%s %s overlap max" % (w, k), r[k + " overlap max"],
                      v["overlap_max"])
            n += same("%s %s p99" % (w, k), r[k + " p99"], v["p99"])
            if int(r[k + " ops"]) != v["count"]:
                fail("%s %s ops: summary %s, JSON %d"
                     % (w, k, r[k + " ops"], v["count"]))
            n += 1
    rows = table(md, "munmap calls (munmapsnoop)") or []
    by_mode = {}
    for r in rows:
        by_mode.setdefault(r["mode"], []).append(r)
    for mode, rs in by_mode.items():
        wl = jsonl(os.path.join(raw, mode, "workload.jsonl"))
        pids = {o["pid"] for o in wl}
        sizes = {o["size_mb"] << 20 for o in wl}
        calls = [c for c in jsonl(os.path.join(raw, mode, "munmapsnoop.jsonl"))
                 if "total_ns" in c and c.get("pid") in pids
                 and c.get("op") == "munmap" and c.get("len") in sizes]
        if len(calls) != len(rs):
            fail("%s: %d munmapsnoop rows, %d big munmap calls in JSON"
                 % (mode, len(rs), len(calls)))
            continue
        for r, c in zip(rs, calls):
            w = "%s call %s" % (mode, r["#"])
            n += same(w + " total", r["total"], c["total_ns"])
            n += same(w + " write hold", r["write hold"], c["write_hold_ns"])
            n += same(w + " read hold", r["read hold"], c["read_hold_ns"])
            n += same(w + " unmap_region", r["unmap_region"],
                      c["unmap_region_ns"])
    if n == 0:
        fail("summary.md has no numbers to compare")
    elif not failed:
        ok("%d numbers in summary.md equal the raw JSON" % n)
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
