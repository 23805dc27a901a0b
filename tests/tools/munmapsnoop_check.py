#!/usr/bin/python3
"""munmapsnoop_check: JSON and trace checks for the munmapsnoop tests.

Commands print one line. Those that check exit 0 (pass: the figures) or 1
(fail: what was expected and what was there); `get` exits 1 with the reason
when there is no such event. Exit 3: a missing file or key.

  get FILE OP LEN [--pid PID] KEY...
      the KEYs of the event (one JSON line) with this op and len (and pid),
      space-separated, booleans as true/false; it must be the only one
  count FILE [--pid PID]
      the number of events (of PID)
  absent FILE PID WHAT
      check: no event of PID in FILE (what the filter must leave out)
  schema FILE...
      check: every line is a schema-1 munmapsnoop event (README contract)
  figures FILE NAME OP LEN [--pid PID]
      "# NAME: total_us=... " (the report's three-mode table)
  funcgraph [--wl T0_NS T1_NS] TRACE [ZAPFUNC...]
      "ZAP_NS VM_MUNMAP_NS ZAP_IRQ_NS VM_IRQ_NS WL_IRQ_NS IRQS":
      function_graph durations of the first __vm_munmap that contains a
      ZAPFUNC (default unmap_region; several: the sum of their calls inside
      it, e.g. 6.12's unmap_vmas free_pgtables tlb_finish_mmu), then what
      interrupts at the tracers' edges cost (see funcgraph_irqs), then
      those interrupts, "-" if none; --wl: the workload's clock reads
      around the call, on the trace's clock, bound its window
"""
import json
import re
import sys

INTS = ["schema", "ts_ns", "pid", "tid", "len", "total_ns", "write_hold_ns", "read_hold_ns",
        "unmap_region_ns", "sections", "lock_drops", "waiters", "wait_ns"]


class Fail(Exception):
    pass


def events(path):
    out = []
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                out.append((i, json.loads(line)))
            except ValueError as e:
                raise Fail("%s:%d is not JSON: %s" % (path, i, e))
    return out


def pid_opt(args):
    if "--pid" in args:
        i = args.index("--pid")
        pid = int(args[i + 1])
        return pid, args[:i] + args[i + 2:]
    return None, args


def select(path, op, ln, pid):
    evs = [o for _, o in events(path)]
    hits = [o for o in evs if o.get("op") == op and o.get("len") == ln
            and (pid is None or o.get("pid") == pid)]
    want = "%s event of %d bytes%s" % (op, ln, "" if pid is None else " by pid %d" % pid)
    if len(hits) != 1:
        seen = ", ".join("%s/%s/pid %s" % (o.get("op"), o.get("len"), o.get("pid")) for o in evs[:6])
        raise Fail("want one %s in %s, found %d (%d events: %s)"
                   % (want, path, len(hits), len(evs), seen or "none"))
    return hits[0]


def fmt(v):
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def cmd_get(args):
    pid, args = pid_opt(args)
    o = select(args[0], args[1], int(args[2]), pid)
    return " ".join(fmt(o[k]) for k in args[3:])


def cmd_count(args):
    pid, args = pid_opt(args)
    return str(sum(1 for _, o in events(args[0]) if pid is None or o.get("pid") == pid))


def cmd_absent(path, pid, what):
    evs = events(path)
    mine = [o for _, o in evs if o.get("pid") == int(pid)]
    if mine:
        raise Fail("%s: want no event of pid %s, got %d: %s"
                   % (what, pid, len(mine), json.dumps(mine[0])[:200]))
    return "%s: no event of pid %s among %d" % (what, pid, len(evs))


def cmd_schema(paths):
    n = 0
    for path in paths:
        for i, o in events(path):
            where = "%s:%d" % (path, i)
            for k in INTS:
                v = o.get(k)
                if not (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
                    raise Fail("%s: %s: got %r, want a non-negative integer" % (where, k, v))
            checks = [
                ("schema", o["schema"] == 1, 1),
                ("tool", o.get("tool") == "munmapsnoop", "munmapsnoop"),
                ("comm", isinstance(o.get("comm"), str), "a string"),
                ("op", o.get("op") in ("munmap", "brk", "mremap"), "munmap|brk|mremap"),
                ("start", isinstance(o.get("start"), str) and re.fullmatch(r"0x[0-9a-f]+", o["start"]),
                 "0x<hex>"),
                ("downgraded", isinstance(o.get("downgraded"), bool), "a boolean"),
                ("mode", o.get("mode") in ("exclusive", "downgrade", "section", "unknown"),
                 "exclusive|downgrade|section|unknown"),
            ]
            for k, good, want in checks:
                if not good:
                    raise Fail("%s: %s: got %r, want %s" % (where, k, o.get(k), want))
            if o["write_hold_ns"] + o["read_hold_ns"] > o["total_ns"]:
                raise Fail("%s: write_hold_ns %d + read_hold_ns %d > total_ns %d"
                           % (where, o["write_hold_ns"], o["read_hold_ns"], o["total_ns"]))
            n += 1
    if not n:
        raise Fail("no JSON lines in %s" % " ".join(paths))
    return "%d event(s)" % n


def cmd_figures(args):
    pid, args = pid_opt(args)
    path, name, op, ln = args[0], args[1], args[2], int(args[3])
    try:
        o = select(path, op, ln, pid)
    except Fail as e:
        return "# %s: %s" % (name, e)

    def us(k):
        return "%.1f" % (o[k] / 1e3)
    return ("# %s: op=%s len_mib=%.0f total_us=%s write_hold_us=%s read_hold_us=%s "
            "unmap_region_us=%s downgraded=%s mode=%s sections=%d lock_drops=%d "
            "waiters=%d wait_us=%s max_wait_us=%s" % (
                name, o["op"], o["len"] / 2**20, us("total_ns"), us("write_hold_ns"),
                us("read_hold_ns"), us("unmap_region_ns"), fmt(o["downgraded"]),
                o["mode"], o["sections"], o["lock_drops"], o["waiters"], us("wait_ns"),
                us("max_wait_ns")))


# Interrupts at the tracers' edges. Two tracers time the same call from
# hooks at different points of its entry and return: an interrupt taken
# between the two hooks counts in one interval and not in the other, and
# moves the difference by its whole cost (4.3 us once on 6.12, a CI run of
# 2026-12-07). The test records the interrupts that hit the workload (irq
# and irq_vectors events, set_event_pid) in the same trace, abstime on
# (us). An interrupt (a run of event lines at most RUN_GAP_US apart, no
# function between) within EDGE_US of a traced entry or return, either
# side, may be in a gap. The workload's own timing reaches from its clock
# reads (--wl T0_NS T1_NS, on the trace's mono clock) to __vm_munmap, and
# EDGE_US beyond; without them, WL_US outside __vm_munmap (measured on
# 6.12: t0 is 11-12 us before the entry, t1 1-2 us after the return, and
# virtio interrupts 14 us after it were charged that way, wrongly).
# Charged: the run's span plus IRQ_PAD_NS (the entry and exit code no
# event covers, and the 1 us rounding).
EDGE_US = 4
RUN_GAP_US = 50		# events further apart: two interrupts
WL_US = 20
IRQ_PAD_NS = 2000


def wl_window(a, b, wl):
    """The workload window's reach (us) around the call [a, b]: its clock
    reads wl (us) and EDGE_US, or WL_US without them."""
    return (wl[0] - EDGE_US, wl[1] + EDGE_US) if wl else (a - WL_US, b + WL_US)


def funcgraph_irqs(runs, edges, a, b, lo, hi):
    """[zap, vm, wl] ns charged and the runs' text for the call [a, b],
    the workload's window reaching [lo, hi] (wl_window())."""
    cost = [0, 0, 0]
    seen = []

    def near(r, t, lim):
        return r[0] - lim <= t <= r[1] + lim

    for r in runs:
        span = (r[1] - r[0]) * 1000 + IRQ_PAD_NS
        hit = [any(near(r, t, EDGE_US) for t in edges),
               near(r, a, EDGE_US) or near(r, b, EDGE_US),
               (lo <= r[1] and r[0] <= a) or (b <= r[1] and r[0] <= hi)]
        for k in range(3):
            if hit[k]:
                cost[k] += span
        if any(hit):
            seen.append("%s@%+dus/%dus" % (r[2], r[0] - a, r[1] - r[0]))
    return cost, ",".join(seen) or "-"


def cmd_funcgraph(path, zap, wl=None):
    zap = zap or ["unmap_region"]
    dur = r"[+!#*@$ ]*([0-9]+)\.?([0-9]*) us\s*\|"
    zsum, zn, a, b, vm, edges, runs, run = 0, 0, None, None, None, [], [], None
    for line in open(path):
        m = re.match(r"\s*([0-9]+)\.([0-9]{6}) \|", line)
        t = int(m.group(1)) * 1000000 + int(m.group(2)) if m else None
        ev = re.search(r"\|\s*/\* (\w+): ", line)
        if ev and t is not None:
            if b is not None and t > hi:
                break
            if run and t - run[1] <= RUN_GAP_US:
                run[1] = t
            else:
                run = [t, t, ev.group(1)]
                runs.append(run)
            continue
        run = None
        if b is not None:
            break		# the workload's next step: done
        if re.search(r"\|\s*__vm_munmap\(\) \{", line):
            zsum, zn, a, edges = 0, 0, t, []
            runs = runs[-8:]	# those before it, for WL_US
            continue
        m = re.search(r"\|\s*(\w+)\(\) \{", line)
        if m and m.group(1) in zap and t is not None:
            edges.append(t)
            continue
        m = re.search(dur + r"\s*(?:(\w+)\(\);|\} /\* (\w+) \*/)", line)
        fn = m.group(3) or m.group(4) if m else None
        if fn in zap:
            ns = us_to_ns(m.group(1), m.group(2))
            zsum += ns
            zn += 1
            if t is not None:	# a leaf's line: its entry; a "}": the return
                edges += [t, t + ns // 1000] if m.group(3) else [t]
            continue
        if fn == "__vm_munmap" and m.group(4):
            if zn:
                vm = us_to_ns(m.group(1), m.group(2))
                if a is None or t is None:
                    return "%d %d 0 0 0 -" % (zsum, vm)
                b = t
                lo, hi = wl_window(a, b, wl)
                runs = [r for r in runs if r[1] >= lo]
                continue
            zsum = 0
    if b is None:
        raise Fail("%s: no __vm_munmap { %s } call with durations" % (path, " ".join(zap)))
    cost, seen = funcgraph_irqs(runs, edges, a, b, lo, hi)
    return "%d %d %d %d %d %s" % (zsum, vm, cost[0], cost[1], cost[2], seen)


def us_to_ns(whole, frac):
    """function_graph's '12345.678' us (3 decimals) in ns, exactly."""
    return int(whole) * 1000 + int((frac + "000")[:3])


def main(argv):
    cmd, args = (argv[1], argv[2:]) if len(argv) > 1 else ("", [])
    if cmd == "get" and len(args) >= 4:
        print(cmd_get(args))
    elif cmd == "count" and args:
        print(cmd_count(args))
    elif cmd == "absent" and len(args) == 3:
        print(cmd_absent(*args))
    elif cmd == "schema" and args:
        print(cmd_schema(args))
    elif cmd == "figures" and len(args) >= 4:
        print(cmd_figures(args))
    elif cmd == "funcgraph" and len(args) >= 4 and args[0] == "--wl":
        print(cmd_funcgraph(args[3], args[4:], (int(args[1]) // 1000, int(args[2]) // 1000)))
    elif cmd == "funcgraph" and len(args) >= 1:
        print(cmd_funcgraph(args[0], args[1:]))
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
        print("munmapsnoop_check.py %s: %s: %s" % (" ".join(sys.argv[1:3]), type(e).__name__, e))
        sys.exit(3)
