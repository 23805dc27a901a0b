#!/usr/bin/python3
"""check_verdict.py REPORTDIR RUN...: summary.md opens with a verdict that
states, for every RUN (KERNEL/MODE or MODE, tests/report/reportlib.py),
what its raw JSON says, and its tables fit the page. Independent of
scripts/render_report.py on purpose.

TAP (tests/report/taplib.py):
  1 the verdict is the first section and has a sentence per RUN (and
    none for a run not given)
  then per RUN, one check, on its sentence:
    - the munmap: "took T (write-held W, read-held R), blocking N
      waiters for up to X" = the longest of the workload's big munmap
      calls in munmapsnoop.jsonl;
    - the longest reader wait in mmlockstat's top_waits, who waited (the
      `ps` reader or the waiting task's comm) and whom it waited behind
      (the holder's comm, op and phase, or that none was recorded, and
      then the longest wait that has one); or "no reader waited" if none;
    - page faults: with per-VMA locks (mmlockstat's "vma_locks"), "never
      waited on mmap_lock (F faults took a VMA lock, B fell back" when
      vma_fallback_wait is empty, else its count and max; without them,
      the longest fault wait among top_waits; and vma_write_wait's count
      and max when there were any;
  last: no table is wider than the two label columns plus one column per
    RUN.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reportlib import DUR, all_tables, dur_is, jsonl, run_of  # noqa: E402
from reportlib import section  # noqa: E402
from taplib import run, want  # noqa: E402


def sentences(md):
    out = {}
    for line in section(md, "Verdict").splitlines():
        m = re.match(r"- \*\*(.+?)\*\*: (.*)$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def find(what, pattern, s):
    m = re.search(pattern, s)
    want(m, what, repr(s[:300]), "/%s/" % pattern)
    return m


def dur(what, cell, ns):
    want(dur_is(cell, ns), what, cell, "%d ns" % ns)


def check_behind(what, text, w):
    """TEXT names the waiter of top_waits entry W and its holder."""
    waiter = "`ps` reader" if w["comm"] == "mt-ps" else w["comm"]
    want(waiter in text, what + ": the waiter", text, waiter)
    h = w.get("holder")
    tail = " behind %s's %s (%s phase)" % (h["comm"], h["op"], h["phase"]) \
        if h else ", holder not recorded"
    want(text.endswith(tail), what + ": whom it waited behind", text,
         "...%s" % tail)
    q = w.get("queued_writer")
    if q:
        task = ("a page fault of %s" % q["comm"] if q["op"] == "fault"
                else "%s (%s)" % (q["comm"], q["op"]))
        via = " behind the queued writer %s" % task
        want(via in text, what + ": the queued writer between", text, via)


def check_run(rep, md, r):
    d, head = run_of(rep, r)
    s = sentences(md).get(head)
    want(s is not None, "sentence for " + head, "none", "one")
    wl = jsonl(os.path.join(d, "workload.jsonl"))
    sizes = {o["size_mb"] << 20 for o in wl}
    pids = {o["pid"] for o in wl}
    calls = [c for c in jsonl(os.path.join(d, "munmapsnoop.jsonl"))
             if "total_ns" in c and c.get("op") == "munmap"
             and c.get("pid") in pids and c.get("len") in sizes]
    want(calls, "the workload's big munmap calls", 0, ">= 1")
    c = max(calls, key=lambda c: c["total_ns"])
    m = find("munmap", r"took (%s) \(write-held (%s), read-held (%s)\), "
             r"blocking (no waiter|(\d+) waiters? for up to (%s))"
             % (DUR, DUR, DUR, DUR), s)
    dur("munmap total", m.group(1), c["total_ns"])
    dur("munmap write-held", m.group(2), c["write_hold_ns"])
    dur("munmap read-held", m.group(3), c["read_hold_ns"])
    if c["waiters"]:
        want(m.group(5) == str(c["waiters"]), "waiters the call blocked",
             m.group(4), c["waiters"])
        dur("the call's longest waiter", m.group(6), c["max_wait_ns"])
    else:
        want(m.group(4) == "no waiter", "waiters the call blocked",
             m.group(4), "no waiter")
    seen = ["munmap %s, %s" % (m.group(1), m.group(4))]

    objs = jsonl(os.path.join(d, "mmlockstat.jsonl"))
    waits = [w for o in objs for w in o.get("top_waits") or []]
    reads = [w for w in waits if w.get("type") == "read"]
    if reads:
        w = max(reads, key=lambda w: w["wait_ns"])
        m = find("longest reader wait", r"reader wait was (%s): (.+?)"
                 r"(?:;|\.$)" % DUR, s)
        dur("longest reader wait", m.group(1), w["wait_ns"])
        check_behind("longest reader wait", m.group(2), w)
        seen.append("reader %s: %s" % (m.group(1), m.group(2)))
        held = [x for x in reads if x.get("holder")]
        if not w.get("holder") and held:
            wh = max(held, key=lambda x: x["wait_ns"])
            m = find("longest wait with a holder", r"longest behind a "
                     r"recorded holder was (%s): (.+?)(?:;|\.$)" % DUR, s)
            dur("longest wait with a holder", m.group(1), wh["wait_ns"])
            check_behind("longest wait with a holder", m.group(2), wh)
            seen.append("with a holder %s" % m.group(1))
    else:
        want("no reader waited on mmap_lock" in s, "no reader waits",
             repr(s[:200]), "'no reader waited on mmap_lock'")
        seen.append("no reader wait")

    vs = [o["vma_locks"] for o in objs if "vma_locks" in o]
    hs = {}
    for o in objs:
        for n, h in o.get("histograms", {}).items():
            hs.setdefault(n, []).append(h)
    if vs and any(v["available"] for v in vs):
        faults = sum(v["faults"] for v in vs)
        fallbacks = sum(v["fallbacks"] for v in vs)
        fb = hs.get("vma_fallback_wait", [])
        n = sum(h["count"] for h in fb)
        if not n:
            want("page faults never waited on mmap_lock (%d faults took a "
                 "VMA lock, %d fell back" % (faults, fallbacks) in s,
                 "page faults with VMA locks", repr(s[-300:]),
                 "never waited, %d VMA-locked, %d fell back"
                 % (faults, fallbacks))
            seen.append("faults never waited (%d, %d)" % (faults, fallbacks))
        else:
            m = find("fallback waits", r"waited on mmap_lock (\d+) times, "
                     r"up to (%s)" % DUR, s)
            want(int(m.group(1)) == n, "fallback waits", m.group(1), n)
            dur("longest fallback wait", m.group(2), max(h["max"]
                                                          for h in fb))
            seen.append("%d fallback waits" % n)
        vw = hs.get("vma_write_wait", [])
        if sum(h["count"] for h in vw):
            m = find("VMA write waits", r"vma_start_write\(\) waited (\d+) "
                     r"times for VMA readers, up to (%s)" % DUR, s)
            want(int(m.group(1)) == sum(h["count"] for h in vw),
                 "VMA write waits", m.group(1), sum(h["count"] for h in vw))
            dur("longest VMA write wait", m.group(2),
                max(h["max"] for h in vw))
            seen.append("%s VMA write waits" % m.group(1))
    else:
        fw = [w for w in reads if w.get("op") == "fault"]
        if fw:
            m = find("fault waits", r"page faults waited up to (%s) on "
                     r"mmap_lock" % DUR, s)
            dur("longest fault wait", m.group(1),
                max(w["wait_ns"] for w in fw))
            seen.append("faults up to %s" % m.group(1))
        else:
            want("page fault" in s and ("never waited" in s or
                                        "no page fault" in s),
                 "no fault waits", repr(s[-200:]),
                 "'page faults never waited' or 'no page fault among'")
            seen.append("no fault waits")
    return ", ".join(seen)


def main(argv):
    rep, runs = argv[0], argv[1:]
    with open(os.path.join(rep, "summary.md")) as f:
        md = f.read()

    def first():
        heads = [run_of(rep, r)[1] for r in runs]
        first = re.search(r"^## (.*)$", md, re.M).group(1)
        want(first == "Verdict", "first section", first, "Verdict")
        got = list(sentences(md))
        want(got == heads, "sentences", got, heads)
        return "%d sentences" % len(got)

    def width():
        limit = 2 + len(runs)
        tables = all_tables(md)
        want(tables, "tables in summary.md", 0, ">= 1")
        wide = [(h, len(c)) for h, c, _ in tables if len(c) > limit]
        want(not wide, "tables wider than %d columns" % limit, wide, "none")
        return "%d tables, widest %d columns" % (
            len(tables), max(len(c) for _, c, _ in tables))

    checks = [("the verdict comes first, a sentence per run", first)]
    for r in runs:
        checks.append(("%s: the verdict states the JSON's munmap, longest "
                       "reader wait and page-fault waits" % r,
                       lambda r=r: check_run(rep, md, r)))
    checks.append(("no table is wider than 2 + %d columns" % len(runs),
                   width))
    run(checks)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
