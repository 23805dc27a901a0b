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
  funcgraph TRACE [ZAPFUNC...]
      "ZAP_NS VM_MUNMAP_NS": function_graph durations of the first
      __vm_munmap that contains a ZAPFUNC (default unmap_region; several:
      the sum of their calls inside it, e.g. 6.12's unmap_vmas
      free_pgtables tlb_finish_mmu)
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


def cmd_funcgraph(path, zap):
    zap = zap or ["unmap_region"]
    dur = r"[+!#*@$ ]*([0-9]+)\.?([0-9]*) us\s*\|"
    zsum, zn = 0, 0
    for line in open(path):
        m = re.search(dur + r"\s*(\w+)\(\);", line)
        if m and m.group(3) in zap:
            zsum += us_to_ns(m.group(1), m.group(2))
            zn += 1
            continue
        m = re.search(dur + r"\s*\} /\* __vm_munmap \*/", line)
        if m:
            if zn:
                return "%d %d" % (zsum, us_to_ns(m.group(1), m.group(2)))
            zsum = 0
    raise Fail("%s: no __vm_munmap { %s } call with durations" % (path, " ".join(zap)))


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
