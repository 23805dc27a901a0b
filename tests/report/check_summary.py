#!/usr/bin/python3
"""check_summary.py REPORTDIR [--no-tools] RUN...: every number in
summary.md's tables equals (to its printed precision) the raw JSON it came
from. Independent of scripts/render_report.py on purpose.

RUN is KERNEL/MODE or MODE (tests/report/reportlib.py): the tables have a
column per run, a row per measure. TAP (tests/report/taplib.py), three
checks per RUN: in the mmlockstat table, the munmapsnoop table and the
userspace latency table, the run's column holds exactly what the raw JSON
of the run gives ("–" where it gives nothing). A run of `make report CMD=`
(runs.jsonl, no workload.jsonl) has the command's longest calls (up to 8)
in the munmapsnoop table and a row per run of the command in the "Command
runs" table instead of the latency table. When the RUNs hold lab/MODE and
patched/MODE (PATCHES=), one more check per such MODE: its rows of the
"Patch comparison" table give the median, min, max and number of the
measured munmap calls of each kernel, and call a change only by the rule
(3+ runs a side, ranges apart; else "no difference" or "too few"). --no-tools: the run had no
BPF tools (TOOLS=none), so both tool tables must say they have no data and
the tool rows of the latency table must be empty."""
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reportlib import jsonl, parse_dur, run_of, section, table  # noqa: E402
from taplib import Fail, run, want  # noqa: E402

EMPTY = "–"


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


def is_cmd(d):
    """A run of `make report CMD=`: runs.jsonl, no workload.jsonl."""
    return os.path.exists(os.path.join(d, "runs.jsonl")) and \
        not os.path.exists(os.path.join(d, "workload.jsonl"))


def column(md, heading, head_of_run):
    """{(first cell, second cell): the run's cell} of a table."""
    head, rows = table(md, heading)
    want(head_of_run in head, "columns of '%s'" % heading, head[2:],
         "one headed %r" % head_of_run)
    i = head.index(head_of_run)
    return {(r[0], r[1]): r[i] for r in rows}


class Report:
    def __init__(self, rep, tools):
        self.rep = rep
        self.tools = tools
        with open(os.path.join(rep, "summary.md")) as f:
            self.md = f.read()

    def mmlockstat(self, run_):
        d, head = run_of(self.rep, run_)
        if not self.tools:
            body = section(self.md, "Lock hold and wait (mmlockstat)")
            want("_no mmlockstat data_" in body, "without tools",
                 "a table", "'_no mmlockstat data_'")
            return "no data, as run without tools"
        objs = jsonl(os.path.join(d, "mmlockstat.jsonl"))
        names = sorted({n for o in objs for n in o.get("histograms", {})})
        want(names, "histograms in mmlockstat.jsonl", "none", "some")
        col = column(self.md, "Lock hold and wait (mmlockstat)", head)
        rows = sorted({h for h, _ in col})
        want(set(names) <= set(rows), "histogram rows", rows,
             "all of %s" % names)
        for (n, stat), cell in col.items():
            w = "%s/%s %s" % (head, n, stat)
            if n not in names:
                want(cell == EMPTY, w, repr(cell),
                     "'%s' (not in this run's JSON)" % EMPTY)
        for n in names:
            c, p50, p99, mx = tool_hist(objs, n)
            w = "%s/%s" % (head, n)
            want(col.get((n, "count")) == str(c), w + " count",
                 col.get((n, "count")), c)
            same(w + " p50", col[(n, "p50")], p50)
            same(w + " p99", col[(n, "p99")], p99)
            same(w + " max", col[(n, "max")], mx)
        return "%d histograms, %d numbers" % (len(names), 4 * len(names))

    def munmapsnoop(self, run_):
        d, head = run_of(self.rep, run_)
        if not self.tools:
            body = section(self.md, "munmap calls (munmapsnoop)")
            want("_no munmapsnoop data_" in body, "without tools",
                 "a table", "'_no munmapsnoop data_'")
            return "no data, as run without tools"
        if is_cmd(d):
            # the command's calls (the tools saw only its cgroup), longest
            # first
            calls = sorted((c for c in jsonl(os.path.join(
                d, "munmapsnoop.jsonl")) if "total_ns" in c),
                key=lambda c: -c["total_ns"])[:8]
            want(calls, "the command's calls in munmapsnoop.jsonl", "none",
                 ">= 1")
        else:
            wl = jsonl(os.path.join(d, "workload.jsonl"))
            pids = {o["pid"] for o in wl}
            sizes = {o["size_mb"] << 20 for o in wl}
            calls = [c for c in jsonl(os.path.join(d, "munmapsnoop.jsonl"))
                     if "total_ns" in c and c.get("pid") in pids
                     and c.get("op") == "munmap" and c.get("len") in sizes]
            want(calls, "the workload's big munmap calls in "
                 "munmapsnoop.jsonl", "none", "%d (one per rep)" % len(wl))
        col = column(self.md, "munmap calls (munmapsnoop)", head)
        shown = sorted({i for (i, _), v in col.items() if v != EMPTY})
        want(shown == ["#%d" % i for i in range(len(calls))], "calls shown",
             shown, "%d (the big munmap calls in the JSON)" % len(calls))
        for i, c in enumerate(calls):
            w = "%s call #%d" % (head, i)
            r = {m: v for (j, m), v in col.items() if j == "#%d" % i}
            for key, row in (("total_ns", "total"),
                             ("write_hold_ns", "write hold"),
                             ("read_hold_ns", "read hold"),
                             ("unmap_region_ns", "unmap_region"),
                             ("wait_ns", "wait (sum)"),
                             ("max_wait_ns", "longest waiter")):
                same("%s %s" % (w, row), r[row], c[key])
            want(r["downgraded"] == ("yes" if c["downgraded"] else "no"),
                 w + " downgraded", r["downgraded"], c["downgraded"])
            for key, row in (("mode", "call mode"), ("sections", "sections"),
                             ("lock_drops", "lock drops"),
                             ("waiters", "waiters")):
                want(r[row] == str(c[key]), "%s %s" % (w, row), r[row],
                     c[key])
        return "%d calls, %d numbers" % (len(calls), 11 * len(calls))

    def runs(self, d, head):
        """make report CMD=: the Command runs table equals runs.jsonl."""
        rs = jsonl(os.path.join(d, "runs.jsonl"))
        want(rs, "runs.jsonl", "empty", "one object per run")
        hd, rows = table(self.md, "Command runs")
        mine = {r[1]: dict(zip(hd, r)) for r in rows if r[0] == head}
        want(sorted(mine) == sorted(str(o["rep"]) for o in rs),
             "%s: runs in the Command runs table" % head, sorted(mine),
             [o["rep"] for o in rs])
        for o in rs:
            r, w = mine[str(o["rep"])], "%s run %d" % (head, o["rep"])
            ex = o["exit"]
            exp = ("**TIMED OUT** (killed)" if o["timed_out"] else
                   "**killed by signal %d**" % -ex if ex < 0 else
                   "0" if ex == 0 else "**%d**" % ex)
            want(r["exit"] == exp, w + " exit", r["exit"], exp)
            want(r["wall"] == "%.1f s" % o["wall_s"], w + " wall", r["wall"],
                 o["wall_s"])
            left = ", ".join("%d %s" % (x["pid"], x["comm"])
                             for x in o["left_running"]) or "none"
            want(r["left running"] == left, w + " left running",
                 r["left running"], left)
            rd = (o.get("readers") or {}).get("cmdline")
            want(r["cmdline reads"] == (str(rd["count"]) if rd else EMPTY),
                 w + " cmdline reads", r["cmdline reads"], rd and rd["count"])
            same(w + " read max", r["read max"], rd and rd["max"])
            same(w + " read p99", r["read p99"], rd and rd["p99"])
        return "%d runs, %d cells" % (len(rs), 6 * len(rs))

    def calls_of(self, d):
        """The measured munmap calls of a run, as the report picks them."""
        cs = [c for c in jsonl(os.path.join(d, "munmapsnoop.jsonl"))
              if "total_ns" in c]
        if is_cmd(d):
            return [c for c in sorted(cs, key=lambda c: -c["total_ns"])[:8]
                    if c.get("op") == "munmap"]
        wl = jsonl(os.path.join(d, "workload.jsonl"))
        return [c for c in cs if c.get("pid") in {o["pid"] for o in wl}
                and c.get("op") == "munmap"
                and c.get("len") in {o["size_mb"] << 20 for o in wl}]

    def patch(self, mode):
        """PATCHES=: the per-call rows of the Patch comparison table."""
        hd, rows = table(self.md, "Patch comparison")
        mine = {r[1]: dict(zip(hd, r)) for r in rows if r[0] == mode}
        cl = self.calls_of(run_of(self.rep, "lab/" + mode)[0])
        cp = self.calls_of(run_of(self.rep, "patched/" + mode)[0])
        want(cl and cp, "measured munmap calls (lab, patched)",
             (len(cl), len(cp)), ">= 1 each")
        dur = r"([0-9.]+ (?:ns|µs|ms|s))"
        for key, lab in (("total_ns", "total"), ("write_hold_ns", "write hold"),
                         ("read_hold_ns", "read hold")):
            w = "%s munmap %s" % (mode, lab)
            r = mine.get("munmap %s, per call" % lab)
            want(r, w + " row", None, "a row")
            vals = {}
            for k, cs in (("lab", cl), ("patched", cp)):
                v = sorted(c.get(key) or 0 for c in cs)
                vals[k] = v
                m = re.fullmatch(dur + r" \(" + dur + "–" + dur +
                                 r", n=(\d+)\)", r[k]) if len(v) > 1 else \
                    re.fullmatch(dur, r[k])
                want(m, "%s %s cell" % (w, k), r[k], "median (min–max, n)")
                med = v[len(v) // 2] if len(v) % 2 else \
                    (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
                same("%s %s median" % (w, k), m.group(1), med)
                if len(v) > 1:
                    same("%s %s min" % (w, k), m.group(2), v[0])
                    same("%s %s max" % (w, k), m.group(3), v[-1])
                    want(m.group(4) == str(len(v)), "%s %s n" % (w, k),
                         m.group(4), len(v))
            a, b = vals["lab"], vals["patched"]
            if len(a) >= 3 and len(b) >= 3:
                apart = max(a) < min(b) or max(b) < min(a)
                want(r["change"].endswith("(ranges apart)") if apart else
                     r["change"] == "no difference (ranges overlap)",
                     w + " change", r["change"],
                     "ranges apart" if apart else "no difference")
            else:
                want(r["change"].endswith("too few runs to call)"),
                     w + " change", r["change"], "too few runs to call")
        return "3 measures, %d + %d calls" % (len(cl), len(cp))

    def latency(self, run_):
        d, head = run_of(self.rep, run_)
        if is_cmd(d):
            return self.runs(d, head)
        wl = jsonl(os.path.join(d, "workload.jsonl"))
        want(wl, "workload.jsonl", "empty", "one object per rep")
        col = column(self.md, "Userspace-measured latency", head)
        shown = sorted(int(i) for (i, m), v in col.items()
                       if m == "munmap" and v != EMPTY)
        want(shown == sorted(o["rep"] for o in wl), "reps in the table",
             shown, [o["rep"] for o in wl])
        rw = ww = (None,) * 4
        if self.tools:
            ms = jsonl(os.path.join(d, "mmlockstat.jsonl"))
            rw = tool_hist(ms, "read_wait")
            ww = tool_hist(ms, "write_wait")
        n = 0
        for o in wl:
            r = {m: v for (j, m), v in col.items() if j == str(o["rep"])}
            w = "%s rep %s" % (head, o["rep"])
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
        r = {m: v for (j, m), v in col.items() if j == "all"}
        same(head + " tool read_wait max", r["tool read_wait max"], rw[3])
        same(head + " tool read_wait p99", r["tool read_wait p99"], rw[2])
        same(head + " tool write_wait max", r["tool write_wait max"], ww[3])
        return "%d reps, %d numbers" % (len(wl), n + 3)


def main(argv):
    tools = "--no-tools" not in argv
    args = [a for a in argv if a != "--no-tools"]
    if len(args) < 2:
        print("usage: check_summary.py REPORTDIR [--no-tools] RUN...",
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
    both = sorted({m.split("/", 1)[1] for m in modes if m.startswith("lab/")}
                  & {m.split("/", 1)[1] for m in modes
                     if m.startswith("patched/")})
    checks += [("%s: the patch comparison equals the raw JSON of lab and "
                "patched" % m, bind("patch", m)) for m in both]
    for m in modes:
        checks += [
            ("%s: mmlockstat table equals mmlockstat.jsonl" % m,
             bind("mmlockstat", m)),
            ("%s: munmapsnoop table equals munmapsnoop.jsonl" % m,
             bind("munmapsnoop", m)),
            ("%s: userspace latency table equals workload.jsonl (CMD=: "
             "the Command runs table equals runs.jsonl)" % m,
             bind("latency", m)),
        ]
    run(checks)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
