#!/usr/bin/python3
"""check_summary.py REPORTDIR [--no-tools] MODE...: every number in
summary.md's tables equals (to its printed precision) the raw JSON it came
from. Independent of scripts/render_report.py on purpose.

TAP (tests/report/taplib.py), three checks per MODE: the mmlockstat table,
the munmapsnoop table and the userspace latency table hold exactly the
rows the raw JSON of MODE gives, with equal numbers. --no-tools: the run
had no BPF tools (TOOLS=none), so both tool tables must say they have no
data and the tool columns of the latency table must be empty."""
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Fail, run, want  # noqa: E402

UNITS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}
EMPTY = "–"


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


def section(md, heading):
    sec = md.split("## " + heading, 1)
    if len(sec) < 2:
        raise Fail("summary.md has no section '## %s'" % heading)
    return sec[1].split("\n## ", 1)[0]


def table(md, heading):
    lines = [l for l in section(md, heading).splitlines()
             if l.startswith("|")]
    if len(lines) < 2:
        return []
    cells = lambda l: [c.strip() for c in l.strip().strip("|").split(" | ")]
    head = cells(lines[0])
    return [dict(zip(head, cells(l))) for l in lines[2:]]


def jsonl(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def same(what, cell, want_ns):
    """cell prints want_ns to its precision (want_ns None: cell is '–')."""
    if want_ns is None:
        want(cell == EMPTY, what, repr(cell), "'%s' (no data)" % EMPTY)
        return
    got, half = parse_dur(cell)
    want(got is not None, what, repr(cell), "a duration (%d ns)" % want_ns)
    want(abs(got - want_ns) <= half + 1e-9 * want_ns, what,
         "summary %s" % cell, "JSON %d ns (+-%g ns)" % (want_ns, half))


def tool_hist(objs, name):
    """count, p50, p99, max of one histogram over all intervals."""
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
        acc, need = 0, max(1, math.ceil(p * count))
        for le in sorted(bk):
            acc += bk[le]
            if acc >= need:
                return le
    return count, q(0.5), q(0.99), max(h["max"] for h in nz)


class Report:
    def __init__(self, rep, tools):
        self.raw = os.path.join(rep, "raw")
        self.tools = tools
        with open(os.path.join(rep, "summary.md")) as f:
            self.md = f.read()

    def mmlockstat(self, mode):
        if not self.tools:
            body = section(self.md, "Lock hold and wait (mmlockstat)")
            want("_no mmlockstat data_" in body, "without tools",
                 "a table", "'_no mmlockstat data_'")
            return "no data, as run without tools"
        objs = jsonl(os.path.join(self.raw, mode, "mmlockstat.jsonl"))
        names = sorted({n for o in objs for n in o.get("histograms", {})})
        want(names, "histograms in mmlockstat.jsonl", "none", "some")
        rows = [r for r in table(self.md, "Lock hold and wait (mmlockstat)")
                if r["mode"] == mode]
        want(sorted(r["histogram"] for r in rows) == names, "histogram rows",
             sorted(r["histogram"] for r in rows), names)
        for r in rows:
            c, p50, p99, mx = tool_hist(objs, r["histogram"])
            w = "%s/%s" % (mode, r["histogram"])
            want(int(r["count"]) == c, w + " count", r["count"], c)
            same(w + " p50", r["p50"], p50)
            same(w + " p99", r["p99"], p99)
            same(w + " max", r["max"], mx)
        return "%d histograms, %d numbers" % (len(rows), 4 * len(rows))

    def munmapsnoop(self, mode):
        if not self.tools:
            body = section(self.md, "munmap calls (munmapsnoop)")
            want("_no munmapsnoop data_" in body, "without tools",
                 "a table", "'_no munmapsnoop data_'")
            return "no data, as run without tools"
        wl = jsonl(os.path.join(self.raw, mode, "workload.jsonl"))
        pids = {o["pid"] for o in wl}
        sizes = {o["size_mb"] << 20 for o in wl}
        calls = [c for c in jsonl(os.path.join(self.raw, mode,
                                               "munmapsnoop.jsonl"))
                 if "total_ns" in c and c.get("pid") in pids
                 and c.get("op") == "munmap" and c.get("len") in sizes]
        want(calls, "the workload's big munmap calls in munmapsnoop.jsonl",
             "none", "%d (one per rep)" % len(wl))
        rows = [r for r in table(self.md, "munmap calls (munmapsnoop)")
                if r["mode"] == mode]
        want(len(rows) == len(calls), "rows", len(rows),
             "%d (the big munmap calls in the JSON)" % len(calls))
        for r, c in zip(rows, calls):
            w = "%s call %s" % (mode, r["#"])
            for col, key in (("total", "total_ns"),
                             ("write hold", "write_hold_ns"),
                             ("read hold", "read_hold_ns"),
                             ("unmap_region", "unmap_region_ns"),
                             ("longest waiter", "max_wait_ns")):
                same("%s %s" % (w, col), r[col], c[key])
            want(r["downgraded"] == ("yes" if c["downgraded"] else "no"),
                 w + " downgraded", r["downgraded"], c["downgraded"])
            for col, key in (("sections", "sections"),
                             ("lock drops", "lock_drops"),
                             ("waiters", "waiters")):
                want(r[col] == str(c[key]), "%s %s" % (w, col), r[col],
                     c[key])
        return "%d calls, %d numbers" % (len(rows), 10 * len(rows))

    def latency(self, mode):
        wl = jsonl(os.path.join(self.raw, mode, "workload.jsonl"))
        want(wl, "workload.jsonl", "empty", "one object per rep")
        rows = [r for r in table(self.md, "Userspace-measured latency")
                if r["mode"] == mode]
        want(sorted(int(r["rep"]) for r in rows) == sorted(o["rep"] for o in wl),
             "reps in the table", [r["rep"] for r in rows],
             [o["rep"] for o in wl])
        rw = ww = (None,) * 4
        if self.tools:
            ms = jsonl(os.path.join(self.raw, mode, "mmlockstat.jsonl"))
            rw = tool_hist(ms, "read_wait")
            ww = tool_hist(ms, "write_wait")
        n = 0
        for r in rows:
            o = [x for x in wl if x["rep"] == int(r["rep"])][0]
            w = "%s rep %s" % (mode, r["rep"])
            same(w + " munmap", r["munmap"], o["munmap_ns"])
            same(w + " populate", r["populate"], o["populate_ns"])
            n += 2
            for k, v in o.get("readers", {}).items():
                same("%s %s max" % (w, k), r[k + " max"], v["max"])
                same("%s %s overlap max" % (w, k), r[k + " overlap max"],
                     v["overlap_max"])
                same("%s %s p99" % (w, k), r[k + " p99"], v["p99"])
                want(r[k + " ops"] == str(v["count"]), "%s %s ops" % (w, k),
                     r[k + " ops"], v["count"])
                n += 4
            same(w + " tool read_wait max", r["tool read_wait max"], rw[3])
            same(w + " tool read_wait p99", r["tool read_wait p99"], rw[2])
            same(w + " tool write_wait max", r["tool write_wait max"], ww[3])
            n += 3
        return "%d reps, %d numbers" % (len(rows), n)


def main(argv):
    tools = "--no-tools" not in argv
    args = [a for a in argv if a != "--no-tools"]
    if len(args) < 2:
        print("usage: check_summary.py REPORTDIR [--no-tools] MODE...",
              file=sys.stderr)
        return 2
    rep, modes = args[0], args[1:]
    try:
        r = Report(rep, tools)
    except OSError as e:
        r = e
    def bind(fn, mode):
        def f():
            if isinstance(r, Exception):
                raise Fail("summary.md unreadable: %s" % r)
            return getattr(r, fn)(mode)
        return f
    checks = []
    for m in modes:
        checks += [
            ("%s: mmlockstat table equals mmlockstat.jsonl" % m,
             bind("mmlockstat", m)),
            ("%s: munmapsnoop table equals munmapsnoop.jsonl" % m,
             bind("munmapsnoop", m)),
            ("%s: userspace latency table equals workload.jsonl" % m,
             bind("latency", m)),
        ]
    run(checks)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
