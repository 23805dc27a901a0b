#!/usr/bin/python3
"""mmlockstat_check: checks for the mmlockstat tests (no jsonschema on Debian
12 without python3-jsonschema, so the schema 1 contract is checked by hand).

Every command that checks prints ONE line and exits 0 (pass: the figures) or
1 (fail: what was expected and what the tool gave); the shell turns it into
one TAP check (pycheck in mmls_lib.sh). Exit 3: a missing file or key.

  schema FILE...
      every line of every FILE is a schema-1 mmlockstat object (DESIGN.md 5)
  hist JSON HIST HOLDFILE SPEC... --lo NS --hi NS [--contains] [--irqs TRACE]
       [--record F L]
      the last object's histogram HIST against the calibration module's own
      measurements in HOLDFILE (mmls_hold's output). SPEC is REQ:FIELD: the
      FIELD (write_ns, read_ns) of every request whose text starts with REQ
      (write, read, downgrade). Every truth value v stands for a tool value
      in [v + lo, v + hi]: count exact (--contains: at least that many:
      --full sees every read hold of the process), every truth in the log2
      bucket of a value in that range, max in [max + lo, max + hi], sum in
      [sum + n*lo, sum + n*hi] (not with --contains). With --irqs, each
      range moves by that truth's interrupt charge (below).
  holds JSON KIND FIELD HOLDFILE SPEC... --lo NS --hi NS [--irqs TRACE]
       [--record F L]
      the same per hold, from top_holds (run the tool with -n 64): the
      FIELD (write_ns, read_ns, total_ns) of the holds of KIND (write,
      read, downgrade) taken in a write(2) -- the module's holds: a --full
      session also sees the process's page faults and exit --, each
      paired with its request by time (the hold whose start_ns is the
      last before the module's locked_at_ns, less than 1 ms before): as
      many, and each tool - truth - charge in [lo, hi].
  waits JSON HOLDFILE --lo NS --hi NS [--irqs TRACE] [--record F L]
      the read waits in top_waits against the reader thread's own timing of
      its blocked pread (reader_ns): as many, each paired with the pread
      its start_ns lies in, and each reader_ns - tool - charge in [lo, hi]
      (the tool's wait lies inside the pread; the charge: the reader's
      interrupts inside its pread and outside the wait).
  woke HOLDFILE --lo NS --hi NS [--irqs TRACE] [--record F L]
      the -r reader's preads (mmls_hold -r with write holds): each started
      inside its hold (so it blocked), and its end - the module's unlock
      timestamp - charge in [lo, hi] (the charge: every interrupt in
      between, whichever task it came on: one vCPU).
  chain JSON HOLDFILE --lo NS --hi NS [--record F L]
      mmls_hold -r R -w W (W < R) with downgrades: each read wait in
      top_waits names the chain reader <- queued writer <- holder: a
      queued_writer whose tid is that of a write wait (the -w thread's
      munmap) and not the reader's, a holder that is mmls_hold's main
      thread in its downgraded-read phase; queued_before_ns (R - W, how
      long the writer had waited) in [lo, hi]; and (paired by size with
      the requests) each wait outlasts the module's hold: reader_at_ns +
      wait_ns > unlocked_at_ns, which only the queued writer explains.
  intervals JSON N --lo MS --hi MS [--record F L]
      JSON has N objects (one per -i interval), each interval_s in [lo, hi] ms
  get JSON EXPR
      print a value of the last object, EXPR a python expression on `o`
  fetch URL FILE
      GET URL (http://IP:PORT/PATH), write the body to FILE, print the HTTP
      status code

--irqs TRACE: the interrupts of the session's tasks, from an ftrace instance
in raw mode (mmls_lib.sh irqs_start/irqs_stop: "#event NAME ID" lines, then
"PID CPU NS type: ID" lines, mono clock). A sample's charge is the
interrupt time of the timed task (the holder; for waits the reader) inside
the tool's interval less that inside the other clock's (the module's, the
reader's own): each times from its own timestamps, so an interrupt between
the two is in one interval only. Without --irqs the charge is 0; a trace
that lost events fails.

--record FILE LABEL appends "LABEL d1 d2 ..." (the deviations, ns) to FILE:
the figures the tolerances were measured from.
"""
import json
import re
import socket
import sys

NAMES = ["write_hold", "read_hold", "downgrade_write_phase",
         "downgrade_read_phase", "read_wait", "write_wait"]


class Fail(Exception):
    pass


def slot(v):
    return max(v, 1).bit_length() - 1


def is_uint(x):
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def check_hist(name, h):
    errs = []
    if not isinstance(h, dict):
        return ["%s is not an object" % name]
    if h.get("unit") != "ns":
        errs.append("%s.unit: got %r, want 'ns'" % (name, h.get("unit")))
    for k in ("count", "sum", "max", "p50", "p99"):
        if not is_uint(h.get(k)):
            errs.append("%s.%s: got %r, want a non-negative integer" % (name, k, h.get(k)))
    b = h.get("buckets")
    if not isinstance(b, list):
        return errs + ["%s.buckets: got %r, want a list" % (name, b)]
    prev = -1
    total = 0
    for e in b:
        if not isinstance(e, dict) or not is_uint(e.get("le")) or \
                not is_uint(e.get("count")):
            errs.append("%s bucket %r malformed" % (name, e))
            continue
        le = e["le"]
        if (le + 1) & le:
            errs.append("%s bucket le=%d is not 2^k-1" % (name, le))
        if le <= prev:
            errs.append("%s buckets not increasing at le=%d" % (name, le))
        prev = le
        total += e["count"]
    if errs:
        return errs
    if total != h["count"]:
        errs.append("%s: buckets sum to %d, count is %d" % (name, total, h["count"]))
    if h["count"]:
        last = b[-1]["le"]
        if not (last + 1) // 2 <= h["max"] <= last:
            errs.append("%s: max %d not in the last bucket (le %d)" % (name, h["max"], last))
        if not h["p50"] <= h["p99"] <= h["max"]:
            errs.append("%s: p50 %d <= p99 %d <= max %d violated" % (name, h["p50"], h["p99"], h["max"]))
        if h["sum"] > h["count"] * h["max"]:
            errs.append("%s: sum %d > count*max %d" % (name, h["sum"], h["count"] * h["max"]))
    elif h["sum"] or h["max"]:
        errs.append("%s: empty but sum %d, max %d" % (name, h["sum"], h["max"]))
    return errs


# drops: total first, ended_without_start last (not in total)
DROP_KEYS = ("total", "map_full", "map_busy", "ringbuf_full", "kprobe_misses",
             "recursion_misses", "ended_without_start")


def check_object(o):
    errs = []
    if not isinstance(o, dict):
        return ["not an object"]
    if o.get("schema") != 1 or isinstance(o.get("schema"), bool):
        errs.append("schema: got %r, want 1" % o.get("schema"))
    if o.get("tool") != "mmlockstat":
        errs.append("tool: got %r, want 'mmlockstat'" % o.get("tool"))
    if not isinstance(o.get("kernel"), str) or not o["kernel"]:
        errs.append("kernel missing")
    iv = o.get("interval_s")
    if not isinstance(iv, (int, float)) or isinstance(iv, bool) or iv <= 0:
        errs.append("interval_s: got %r, want a positive number" % iv)
    d = o.get("drops")
    if not isinstance(d, dict):
        errs.append("drops: got %r, want an object" % d)
    else:
        for k in DROP_KEYS:
            if not is_uint(d.get(k)) and not (k == "kprobe_misses" and k in d and d[k] is None):
                errs.append("drops.%s: got %r, want a non-negative integer" % (k, d.get(k)))
        if not errs and d["total"] != sum(d[k] or 0 for k in DROP_KEYS[1:-1]):
            errs.append("drops.total %d != the sum of its causes" % d["total"])
    if "stacks_lost" in o and not is_uint(o["stacks_lost"]):
        errs.append("stacks_lost: got %r, want a non-negative integer" % o["stacks_lost"])
    hs = o.get("histograms")
    if not isinstance(hs, dict):
        return errs + ["histograms missing"]
    for n in NAMES:
        if n not in hs:
            errs.append("histogram %s missing" % n)
    for n, h in hs.items():
        errs += check_hist(n, h)
    for w in o.get("top_waits", []):
        for k in ("type", "start_ns", "wait_ns", "pid", "comm", "holder", "queued_writer"):
            if k not in w:
                errs.append("top_waits entry without %s" % k)
        if w.get("queued_writer") is not None:
            for k in ("pid", "tid", "comm", "op", "queued_before_ns"):
                if k not in w["queued_writer"]:
                    errs.append("top_waits queued_writer without %s" % k)
        if w.get("holder") is not None:
            for k in ("pid", "comm", "op", "phase"):
                if k not in w["holder"]:
                    errs.append("top_waits holder without %s" % k)
    for t in o.get("top_holds", []):
        for k in ("kind", "start_ns", "total_ns", "write_ns", "read_ns", "pid", "comm", "op"):
            if k not in t:
                errs.append("top_holds entry without %s" % k)
    return errs


def load(path):
    objs = []
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if line.strip():
                try:
                    objs.append((i, json.loads(line)))
                except ValueError as e:
                    raise Fail("%s line %d is not JSON: %s" % (path, i, e))
    return objs


def last(path):
    objs = load(path)
    if not objs:
        raise Fail("%s: no JSON object (did the tool run? see its .err)" % path)
    return objs[-1][1]


def cmd_schema(paths):
    n = 0
    bad = []
    for p in paths:
        objs = load(p)
        if not objs:
            bad.append("%s: no object" % p)
        for i, o in objs:
            n += 1
            bad += ["%s:%d: %s" % (p, i, e) for e in check_object(o)]
    if bad:
        raise Fail("%d problem(s), first: %s" % (len(bad), "; ".join(bad[:3])))
    return "%d file(s), %d object(s)" % (len(paths), n)


def truth_recs(holdfile, specs):
    """The module's measurements for REQ:FIELD specs, from mmls_hold: one
    (value ns, REQ's kind, FIELD, the module's interval of FIELD (from, to)
    ns, locked_at_ns) per matching request, in the order of SPECS and then
    of the requests."""
    lines = [l.split() for l in open(holdfile) if l.startswith("req=")]
    if not lines:
        raise Fail("%s: no request lines (mmls_hold failed?)" % holdfile)
    out = []
    for spec in specs:
        req, field = spec.split(":")
        for l in lines:
            kv = dict(x.split("=", 1) for x in l)
            if not kv["req"].startswith(req):
                continue
            if kv["rc"] != "0":
                raise Fail("%s: request %s failed: rc=%s" % (holdfile, kv["req"], kv["rc"]))
            at, wr = int(kv.get("locked_at_ns", 0)), int(kv["write_ns"])
            end = at + wr + int(kv["read_ns"])
            iv = {"write_ns": (at, at + wr), "read_ns": (at + wr, end),
                  "total_ns": (at, end)}.get(field)
            out.append((int(kv[field]), req, field, iv, at))
    if not out:
        raise Fail("%s: no request matches %s" % (holdfile, " ".join(specs)))
    return out


def truths(holdfile, specs):
    """The module's measurements (ns) for REQ:FIELD specs, sorted."""
    return sorted(t[0] for t in truth_recs(holdfile, specs))


SOFT_IRQS = ("softirq", "tasklet")


def irq_spans(path):
    """{tid: [(from, to)]}: when an interrupt (hard, vector or soft) ran
    on top of each task, from an irqs_stop trace. Nested entries (a
    softirq at a hardirq's exit, a tick inside a softirq) make one span.
    Each CPU keeps a stack of open entries. Only a softirq or a tasklet
    can be interrupted, and not by its own kind: an open entry that the
    next entry could not have interrupted had no exit traced (it ran
    before the exit event was on), so it is dropped; an exit with no open
    entry is ignored (it began before the trace)."""
    ids, stack, start, spans = {}, {}, {}, {}
    for line in open(path, errors="replace"):
        f = line.split()
        if line.startswith("#event ") and len(f) == 3:
            ids[f[2]] = f[1]
        elif line.startswith("#lost ") and len(f) == 2 and f[1] != "0":
            raise Fail("%s: the irq trace lost %s event(s): cannot charge" % (path, f[1]))
        elif len(f) == 5 and f[3] == "type:" and f[4] in ids:
            pid, cpu, ts, name = int(f[0]), f[1], int(f[2]), ids[f[4]]
            kind = name.split("/")[-1].rsplit("_", 1)[0]
            st = stack.setdefault(cpu, [])
            if name.endswith("_entry"):
                while st and (st[-1] not in SOFT_IRQS or kind in st):
                    st.pop()
                if not st:
                    start[cpu] = (pid, ts)
                st.append(kind)
            elif name.endswith("_exit") and kind in st:
                del st[st.index(kind):]
                if not st:
                    p, t0 = start.pop(cpu)
                    spans.setdefault(p, []).append((t0, ts))
    if not ids:
        raise Fail("%s: no #event lines: not an irqs_stop trace" % path)
    return spans


def overlap(spans, iv):
    return sum(max(0, min(b, iv[1]) - max(a, iv[0])) for a, b in spans)


def tool_iv(t, field):
    """A top_holds entry's interval for FIELD (ns, tool's clock)."""
    s = t["start_ns"]
    return {"write_ns": (s, s + t["write_ns"]),
            "read_ns": (s + t["write_ns"], s + t["write_ns"] + t["read_ns"]),
            "total_ns": (s, s + t["total_ns"])}[field]


def pair(tops, recs, what, listed=True):
    """Each truth record's top hold: the module's hold in write(2) of the
    REQ's kind whose start_ns is the last before its locked_at_ns, less
    than 1 ms before. A list of (record, hold); the hold is None for a
    record without one if not LISTED (a hold the tool timed but did not
    report: an untracked downgrade's write phase), else that fails."""
    out, used = [], set()
    for r in recs:
        at = r[4]
        c = [(at - t["start_ns"], i) for i, t in enumerate(tops)
             if t["kind"] == r[1] and t["syscall"] == SYS_WRITE
             and 0 <= at - t["start_ns"] < 1000000 and i not in used]
        if not c and listed:
            raise Fail("%s: no top hold of kind %s in write(2) starts within 1 ms before the "
                       "module's locked_at_ns %s (is -n large enough?)" % (what, r[1], at))
        if c:
            used.add(min(c)[1])
        out.append((r, tops[min(c)[1]] if c else None))
    return out


def charges(o, recs, field, irqs, what, reach=None, holder=None):
    """Each truth record's interrupt charge (ns; see --irqs), as a range
    (lo, hi): (c, c) for a record paired with its top hold. A record
    without one (hist only) gets the range its tool interval could have:
    its edges lie within REACH ns of the module's, so up to the holder's
    interrupt time in the REACH outside the module's interval more, up to
    that in the REACH inside less."""
    if not irqs:
        return [(0, 0)] * len(recs)
    spans = irq_spans(irqs)
    out = []
    for r, t in pair(o["top_holds"], recs, what, listed=reach is None):
        if t:
            sp = spans.get(t["tid"], [])
            c = overlap(sp, tool_iv(t, field or r[2])) - overlap(sp, r[3])
            out.append((c, c))
            continue
        sp = spans.get(holder, [])
        a, b = r[3]
        out.append((-overlap(sp, (a, min(a + reach, b))) - overlap(sp, (max(b - reach, a), b)),
                    overlap(sp, (a - reach, a)) + overlap(sp, (b, b + reach))))
    return out


def charged(cs):
    figs = ["%+d" % a if a == b else "[%+d, %+d] (not listed)" % (a, b)
            for a, b in cs if a or b]
    return ", interrupts charged: %s" % ", ".join(figs) if figs else ""


def record(rec, devs):
    if rec:
        with open(rec[0], "a") as f:
            f.write("%s %s\n" % (rec[1], " ".join(str(d) for d in devs)))


def rng(devs):
    return "[%d, %d]" % (min(devs), max(devs)) if devs else "[]"


def cmd_hist(path, name, holdfile, specs, lo, hi, contains, rec, irqs=None):
    o = last(path)
    h = o["histograms"][name]
    recs = sorted(truth_recs(holdfile, specs), key=lambda r: r[0])
    truth = [r[0] for r in recs]
    n = len(truth)
    what = "%s: %d truth sample(s) %s us" % (name, n, ",".join(str(v // 1000) for v in truth))
    pid = next((int(l.split()[1]) for l in open(holdfile) if l.startswith("ready ")), None)
    cs = charges(o, recs, None, irqs, what, reach=max(abs(lo), abs(hi)), holder=pid)
    if contains and h["count"] < n:
        raise Fail("%s: count: got %d, want >= %d" % (what, h["count"], n))
    if not contains and h["count"] != n:
        raise Fail("%s: count: got %d, want %d" % (what, h["count"], n))
    errs = []
    got = []
    for b in h["buckets"]:
        got += [slot(b["le"])] * b["count"]
    got.sort()
    unmatched = []
    for v, (clo, chi) in reversed(list(zip(truth, cs))):
        ok_slots = set(range(slot(max(v + lo + clo, 0)), slot(v + hi + chi) + 1))
        for i in range(len(got) - 1, -1, -1):
            if got[i] in ok_slots:
                del got[i]
                break
        else:
            unmatched.append("%d (slots %s)" % (v, sorted(ok_slots)))
    if unmatched:
        errs.append("truth not in its log2 bucket: %s; tool's buckets %s"
                    % (", ".join(unmatched[:4]), [(b["le"], b["count"]) for b in h["buckets"]]))
    # the tool's max is the largest v + dev + c, each dev in [lo, hi]
    mlo = max(v + lo + c[0] for v, c in zip(truth, cs))
    mhi = max(v + hi + c[1] for v, c in zip(truth, cs))
    dmax = h["max"] - truth[-1]
    if not mlo <= h["max"] <= mhi:
        errs.append("max: got %d, want %d + [%d, %d] (off by %d%s)"
                    % (h["max"], truth[-1], mlo - truth[-1], mhi - truth[-1], dmax, charged(cs)))
    figs = "max %+d ns" % dmax
    record(rec, [dmax - cs[-1][0] if cs[-1][0] == cs[-1][1] else dmax])
    if not contains:
        dsum = h["sum"] - sum(truth)
        figs += ", sum %+d ns" % dsum
        slo, shi = n * lo + sum(c[0] for c in cs), n * hi + sum(c[1] for c in cs)
        if not slo <= dsum <= shi:
            errs.append("sum: got %d, want %d + [%d, %d] (off by %d%s)"
                        % (h["sum"], sum(truth), slo, shi, dsum, charged(cs)))
    if errs:
        raise Fail("%s: %s" % (what, "; ".join(errs)))
    return "%s: count %d, buckets match, %s vs truth (allowed per sample [%d, %d] ns%s)" % (
        what, h["count"], figs, lo, hi, charged(cs))


SYS_WRITE = 1


def cmd_holds(path, kind, field, holdfile, specs, lo, hi, rec, irqs=None):
    o = last(path)
    tops = [t for t in o["top_holds"] if t["kind"] == kind and t["syscall"] == SYS_WRITE]
    recs = truth_recs(holdfile, specs)
    what = "%s %s holds' %s" % (len(recs), kind, field)
    if len(tops) != len(recs):
        raise Fail("%s: top_holds of kind %s in write(2): got %d, want %d (is -n large enough?)"
                   % (what, kind, len(tops), len(recs)))
    pairs = pair(tops, recs, what)
    cs = [c for c, _ in charges(o, recs, field, irqs, what)]
    devs = [t[field] - r[0] - c for (r, t), c in zip(pairs, cs)]
    record(rec, devs)
    bad = ["%d vs truth %d (%+d%s)" % (t[field], r[0], t[field] - r[0],
                                       ", %+d interrupts" % c if c else "")
           for (r, t), c, d in zip(pairs, cs, devs) if not lo <= d <= hi]
    if bad:
        raise Fail("%s: tool - truth%s outside [%d, %d] ns: %s"
                   % (what, " - charge" if irqs else "", lo, hi, "; ".join(bad[:4])))
    return "%s: tool - truth%s in %s ns (allowed [%d, %d]%s)" % (
        what, " - charge" if irqs else "", rng(devs), lo, hi, charged([(c, c) for c in cs]))


def cmd_waits(path, holdfile, lo, hi, rec, irqs=None):
    o = last(path)
    waits = [w for w in o["top_waits"] if w["type"] == "read"]
    preads = [dict(x.split("=", 1) for x in l.split())
              for l in open(holdfile) if l.startswith("req=write")]
    preads = [(int(kv["reader_at_ns"]), int(kv["reader_ns"])) for kv in preads]
    what = "%d read waits" % len(preads)
    if len(waits) != len(preads):
        raise Fail("%s: top_waits of type read: got %d, want %d" % (what, len(waits), len(preads)))
    # each wait with the pread it lies in; a charge for an interrupt of
    # the reader inside its pread and outside the tool's wait (--irqs)
    spans = irq_spans(irqs) if irqs else {}
    devs, cs, bad = [], [], []
    for at, own in preads:
        w = next((w for w in waits if at <= w["start_ns"] < at + own), None)
        if w is None:
            raise Fail("%s: no read wait in top_waits began inside the pread at %d (%d ns)"
                       % (what, at, own))
        sp = spans.get(w["tid"], [])
        c = overlap(sp, (at, at + own)) - overlap(sp, (w["start_ns"], w["start_ns"] + w["wait_ns"]))
        d = own - w["wait_ns"] - c
        devs.append(d)
        cs.append((c, c))
        if not lo <= d <= hi:
            bad.append("tool %d vs reader's own %d (%+d%s)" % (w["wait_ns"], own, own - w["wait_ns"],
                                                               ", %+d interrupts" % c if c else ""))
    record(rec, devs)
    if bad:
        raise Fail("%s: reader's own - tool%s outside [%d, %d] ns: %s"
                   % (what, " - charge" if irqs else "", lo, hi, "; ".join(bad)))
    return "%s: reader's own pread - tool's wait%s in %s ns (allowed [%d, %d]%s)" % (
        what, " - charge" if irqs else "", rng(devs), lo, hi, charged(cs))


def cmd_woke(holdfile, lo, hi, rec, irqs=None):
    lines = [dict(x.split("=", 1) for x in l.split())
             for l in open(holdfile) if l.startswith("req=write")]
    if not lines:
        raise Fail("%s: no write request lines (mmls_hold failed?)" % holdfile)
    # on the single vCPU every interrupt between the unlock and the pread's
    # end delays that end, whichever task it came on
    spans = [sp for v in (irq_spans(irqs) if irqs else {}).values() for sp in v]
    devs, cs, late, bad = [], [], [], []
    for kv in lines:
        at, own = int(kv["reader_at_ns"]), int(kv["reader_ns"])
        locked, unlocked = int(kv["locked_at_ns"]), int(kv["unlocked_at_ns"])
        c = overlap(spans, (unlocked, at + own))
        d = at + own - unlocked - c
        devs.append(d)
        cs.append((c, c))
        late.append(kv["reader_late_ns"])
        if not locked < at < unlocked:
            bad.append("pread at %d not inside the hold [%d, %d]" % (at, locked, unlocked))
        elif not lo <= d <= hi:
            bad.append("ended %+d ns after the unlock%s" % (
                at + own - unlocked, ", %d ns of interrupts" % c if c else ""))
    record(rec, devs)
    what = "%d preads (late on their deadlines by %s ns)" % (len(lines), " ".join(late))
    if bad:
        raise Fail("%s: %s; allowed (end - unlock%s) [%d, %d] ns"
                   % (what, "; ".join(bad), " - charge" if irqs else "", lo, hi))
    return ("%s: each started inside its hold and ended after the unlock by %s ns%s "
            "(allowed [%d, %d]%s)" % (what, rng(devs), ", less interrupts" if irqs else "",
                                      lo, hi, charged(cs)))


def cmd_chain(path, holdfile, lo, hi, rec):
    o = last(path)
    reads = sorted((w for w in o["top_waits"] if w["type"] == "read"),
                   key=lambda w: w["wait_ns"])
    wtids = {w["tid"] for w in o["top_waits"] if w["type"] == "write"}
    lines = [dict(x.split("=", 1) for x in l.split())
             for l in open(holdfile) if l.startswith("req=")]
    lines.sort(key=lambda kv: int(kv["unlocked_at_ns"]) - int(kv["reader_at_ns"]))
    pid = next(int(l.split()[1]) for l in open(holdfile) if l.startswith("ready "))
    what = "%d read waits" % len(lines)
    if len(reads) != len(lines):
        raise Fail("%s: top_waits of type read: got %d, want %d" % (what, len(reads), len(lines)))
    if len(wtids) != 1:
        raise Fail("%s: want the write waits of one thread (the -w writer), got tids %s"
                   % (what, sorted(wtids)))
    wtid = wtids.pop()
    bad, devs, over = [], [], []
    for w, kv in zip(reads, lines):
        q, h = w.get("queued_writer"), w.get("holder")
        if not q:
            bad.append("wait of %d ns: no queued_writer" % w["wait_ns"])
            continue
        if (q["tid"], q["op"]) != (wtid, "munmap") or q["tid"] == w["tid"]:
            bad.append("queued_writer %s/%s, want %d/munmap (reader %d)"
                       % (q["tid"], q["op"], wtid, w["tid"]))
        if not h or (h["pid"], h["tid"], h["phase"]) != (pid, pid, "downgraded-read"):
            bad.append("holder %s, want %d/%d downgraded-read"
                       % (h and (h["pid"], h["tid"], h["phase"]), pid, pid))
        devs.append(q["queued_before_ns"])
        if not lo <= q["queued_before_ns"] <= hi:
            bad.append("queued_before_ns %d outside [%d, %d]" % (q["queued_before_ns"], lo, hi))
        past = int(kv["reader_at_ns"]) + w["wait_ns"] - int(kv["unlocked_at_ns"])
        over.append(past)
        if past <= 0:
            bad.append("the wait ended %d ns before the module's unlock" % -past)
    record(rec, devs)
    if bad:
        raise Fail("%s: %s" % (what, "; ".join(bad)))
    return ("%s: reader <- queued writer %d (munmap, queued %s ns before) <- holder %d "
            "(downgraded-read); each wait outlasted the module's hold by %s ns"
            % (what, wtid, rng(devs), pid, rng(over)))


def cmd_intervals(path, n, lo, hi, rec):
    ivs = [o.get("interval_s") for _, o in load(path)]
    ms = [round(v * 1000, 1) for v in ivs if isinstance(v, (int, float))]
    record(rec, ms)
    if len(ivs) != n:
        raise Fail("objects: got %d, want %d (interval_s %s)" % (len(ivs), n, ivs))
    bad = [v for v in ms if not lo <= v <= hi]
    if len(ms) != n or bad:
        raise Fail("interval_s: got %s ms, want each in [%d, %d]" % (ms, lo, hi))
    return "%d objects, interval_s %s ms (allowed [%d, %d])" % (n, ms, lo, hi)


def cmd_fetch(url, path):
    """A raw HTTP/1.0 GET: the request is built before connecting and sent
    at once. The exporter reads it with a 1 s timeout; urllib's lazy work
    between connect and send (module imports: file reads) can outlast that
    under icount, where a vCPU waiting for 9p jumps guest time ahead."""
    m = re.fullmatch(r"http://([0-9.]+):([0-9]+)(/.*)", url)
    if not m:
        raise Fail("fetch: want http://IP:PORT/PATH, got %s" % url)
    host, port, rpath = m.group(1), int(m.group(2)), m.group(3)
    req = ("GET %s HTTP/1.0\r\nHost: %s:%d\r\n\r\n" % (rpath, host, port)).encode()
    data = b""
    with socket.create_connection((host, port), timeout=60) as s:
        s.sendall(req)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].split()
    if len(status) < 2 or not status[1].isdigit():
        raise Fail("fetch %s: no HTTP status line in %r" % (url, data[:100]))
    with open(path, "wb") as f:
        f.write(body)
    return status[1].decode()


def opts(args):
    """--lo/--hi/--contains/--record out of ARGS; the rest is positional."""
    lo = hi = irqs = None
    contains, rec, pos = False, None, []
    while args:
        a = args.pop(0)
        if a == "--lo":
            lo = int(args.pop(0))
        elif a == "--hi":
            hi = int(args.pop(0))
        elif a == "--contains":
            contains = True
        elif a == "--record":
            rec = (args.pop(0), args.pop(0))
        elif a == "--irqs":
            irqs = args.pop(0)
        else:
            pos.append(a)
    if lo is None or hi is None:
        raise Fail("--lo and --hi are required")
    return pos, lo, hi, contains, rec, irqs


def main(argv):
    cmd, args = (argv[1], argv[2:]) if len(argv) > 1 else ("", [])
    if cmd == "schema" and args:
        print(cmd_schema(args))
    elif cmd == "hist" and len(args) >= 4:
        pos, lo, hi, contains, rec, irqs = opts(args)
        print(cmd_hist(pos[0], pos[1], pos[2], pos[3:], lo, hi, contains, rec, irqs))
    elif cmd == "holds" and len(args) >= 5:
        pos, lo, hi, _, rec, irqs = opts(args)
        print(cmd_holds(pos[0], pos[1], pos[2], pos[3], pos[4:], lo, hi, rec, irqs))
    elif cmd == "waits" and len(args) >= 2:
        pos, lo, hi, _, rec, irqs = opts(args)
        print(cmd_waits(pos[0], pos[1], lo, hi, rec, irqs))
    elif cmd == "woke" and len(args) >= 1:
        pos, lo, hi, _, rec, irqs = opts(args)
        print(cmd_woke(pos[0], lo, hi, rec, irqs))
    elif cmd == "chain" and len(args) >= 2:
        pos, lo, hi, _, rec, _ = opts(args)
        print(cmd_chain(pos[0], pos[1], lo, hi, rec))
    elif cmd == "intervals" and len(args) >= 2:
        pos, lo, hi, _, rec, _ = opts(args)
        print(cmd_intervals(pos[0], int(pos[1]), lo, hi, rec))
    elif cmd == "get" and len(args) == 2:
        print(eval(args[1], {"o": last(args[0])}))
    elif cmd == "fetch" and len(args) == 2:
        print(cmd_fetch(args[0], args[1]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Fail as e:
        print(e)
        sys.exit(1)
    except (OSError, LookupError, ValueError, TypeError) as e:
        # a missing file or key is a failed check, never a silent pass
        print("mmlockstat_check.py %s: %s: %s" % (" ".join(sys.argv[1:3]), type(e).__name__, e))
        sys.exit(3)
