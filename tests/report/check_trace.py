#!/usr/bin/python3
"""check_trace.py REPORTDIR [--no-tools] RUN...: trace.json is a Chrome
trace (Trace Event Format) of the raw JSON it came from.

RUN is KERNEL/MODE or MODE (tests/report/reportlib.py). TAP
(tests/report/taplib.py): one check that every complete (X) slice is
well formed, then per RUN: its process ("mode: " and its column heading)
holds one userspace munmap()
slice per rep at the workload's own start and duration; and one slice per
munmapsnoop call at the tool's start and duration, its lock phases inside
the call (--no-tools: no call slices, the userspace ones above being the
positive control that the mode's process was written)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reportlib import jsonl, run_of  # noqa: E402
from taplib import run, want  # noqa: E402


def near(a, b):
    """Equal to the float precision of microseconds."""
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


def main(argv):
    tools = "--no-tools" not in argv
    args = [a for a in argv if a != "--no-tools"]
    rep, modes = args[0], args[1:]
    st = {}

    def events():
        if "ev" not in st:
            with open(os.path.join(rep, "trace.json")) as f:
                st["ev"] = json.load(f)["traceEvents"]
        return st["ev"]

    def pid_of(mode):
        head = run_of(rep, mode)[1]
        p = [e["pid"] for e in events() if e["ph"] == "M"
             and e["name"] == "process_name"
             and e["args"]["name"] == "mode: %s" % head]
        want(len(p) == 1, "processes named 'mode: %s'" % head, len(p), 1)
        return p[0]

    def wellformed():
        x = [e for e in events() if e["ph"] == "X"]
        want(x, "complete (X) slices", 0, ">= 1")
        bad = [e for e in x if not (isinstance(e.get("ts"), (int, float))
                                    and isinstance(e.get("dur"), (int, float))
                                    and e["dur"] >= 0 and "pid" in e
                                    and "tid" in e and e.get("name"))]
        want(not bad, "slices without ts/dur>=0/pid/tid/name", bad[:1], "none")
        return "%d X slices" % len(x)

    def one_slice(pid, name, start_ns, dur_ns):
        """Exactly one X slice NAME in process PID, at START_NS for DUR_NS."""
        s = [e for e in events() if e["ph"] == "X" and e["pid"] == pid
             and e["name"] == name]
        want(len(s) == 1, "slices '%s'" % name, len(s), 1)
        want(near(s[0]["ts"], start_ns / 1e3) and near(s[0]["dur"], dur_ns / 1e3),
             name + " ts/dur (us)", (s[0]["ts"], s[0]["dur"]),
             (start_ns / 1e3, dur_ns / 1e3))

    def userspace(mode):
        pid = pid_of(mode)
        d = run_of(rep, mode)[0]
        if os.path.exists(os.path.join(d, "runs.jsonl")) and \
                not os.path.exists(os.path.join(d, "workload.jsonl")):
            # CMD=: one slice per run of the command, on the tools' clock
            rs = jsonl(os.path.join(d, "runs.jsonl"))
            want(rs, "runs.jsonl objects", 0, ">= 1")
            for o in rs:
                one_slice(pid, "command run %d" % o["rep"], o["start_ns"],
                          o["end_ns"] - o["start_ns"])
            return "%d command runs" % len(rs)
        wl = jsonl(os.path.join(d, "workload.jsonl"))
        want(wl, "workload.jsonl objects", 0, ">= 1")
        for o in wl:
            one_slice(pid, "munmap() [userspace, rep %d]" % o["rep"],
                      o["munmap_start_ns"], o["munmap_ns"])
        return "%d reps" % len(wl)

    def calls(mode):
        pid = pid_of(mode)
        sl = [e for e in events() if e["ph"] == "X" and e["pid"] == pid
              and e.get("cat") == "munmap"]
        if not tools:
            want(not sl, "munmap call slices without tools", len(sl), 0)
            return "none, as run without tools"
        cs = [c for c in jsonl(os.path.join(run_of(rep, mode)[0], "munmapsnoop.jsonl"))
              if "total_ns" in c]
        want(cs, "calls in munmapsnoop.jsonl", 0, ">= 1")
        want(len(sl) == len(cs), "call slices", len(sl),
             "%d (one per munmapsnoop call)" % len(cs))
        for e, c in zip(sl, cs):
            want(near(e["ts"], c["ts_ns"] / 1e3)
                 and near(e["dur"], c["total_ns"] / 1e3),
                 "call slice ts/dur (us)", (e["ts"], e["dur"]),
                 (c["ts_ns"] / 1e3, c["total_ns"] / 1e3))
            end = e["ts"] + e["dur"]
            for p in events():
                if (p["ph"] == "X" and p["pid"] == pid and p["tid"] == e["tid"]
                        and p.get("cat") in ("lock", "mm")
                        and e["ts"] <= p["ts"] < end):
                    want(p["ts"] + p["dur"] <= end + 1e-3,
                         "%s slice inside its call" % p["name"],
                         "ends at %.3f" % (p["ts"] + p["dur"]),
                         "<= %.3f" % end)
        return "%d calls" % len(cs)

    checks = [("trace.json: every X slice has ts, dur >= 0, pid, tid, name",
               wellformed)]
    for m in modes:
        checks += [
            ("trace.json %s: the userspace munmap() of every rep (CMD=: "
             "every run of the command)" % m,
             lambda m=m: userspace(m)),
            ("trace.json %s: one slice per munmapsnoop call, phases inside"
             % m, lambda m=m: calls(m)),
        ]
    run(checks)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
