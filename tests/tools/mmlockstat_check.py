#!/usr/bin/python3
"""mmlockstat_check: checks for the mmlockstat tests (no jsonschema on Debian
12 without python3-jsonschema, so the schema 1 contract is checked by hand).

  mmlockstat_check.py schema FILE
      every line of FILE is a schema-1 mmlockstat object (DESIGN.md sec. 5)
  mmlockstat_check.py hist FILE HIST NS... [--tol-us A] [--tol-pct P]
                     [--lower-us L] [--contains]
      the last object's histogram HIST holds exactly the samples NS (ground
      truth), each in its log2 bucket -- or in the neighbour that truth +
      tolerance (or truth - L) falls in -- with sum and max within
      [truth - L - 2 us, truth + tolerance] per sample. --contains: HIST may
      hold other samples too (--full sees every read hold of the process);
      each truth sample must still be matched and max must agree.
  mmlockstat_check.py get FILE EXPR
      print a value of the last object, EXPR a python expression on `o`

Prints "ok - ..." / "not ok - ..." lines; exits 1 on any failure.
"""
import json
import sys

NAMES = ["write_hold", "read_hold", "downgrade_write_phase",
         "downgrade_read_phase", "read_wait", "write_wait"]
failed = False


def report(good, what, why=""):
    global failed
    if good:
        print("ok - " + what)
    else:
        failed = True
        print("not ok - %s: %s" % (what, why))


def slot(v):
    return max(v, 1).bit_length() - 1


def is_uint(x):
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def check_hist(name, h):
    errs = []
    if not isinstance(h, dict):
        return ["%s is not an object" % name]
    if h.get("unit") != "ns":
        errs.append("%s.unit != ns" % name)
    for k in ("count", "sum", "max", "p50", "p99"):
        if not is_uint(h.get(k)):
            errs.append("%s.%s not a non-negative integer" % (name, k))
    b = h.get("buckets")
    if not isinstance(b, list):
        return errs + ["%s.buckets not a list" % name]
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
            errs.append("%s: sum > count*max" % name)
    elif h["sum"] or h["max"]:
        errs.append("%s: empty but sum/max non-zero" % name)
    return errs


def check_object(o):
    errs = []
    if not isinstance(o, dict):
        return ["not an object"]
    if o.get("schema") != 1 or isinstance(o.get("schema"), bool):
        errs.append("schema != 1")
    if o.get("tool") != "mmlockstat":
        errs.append("tool != mmlockstat")
    if not isinstance(o.get("kernel"), str) or not o["kernel"]:
        errs.append("kernel missing")
    iv = o.get("interval_s")
    if not isinstance(iv, (int, float)) or isinstance(iv, bool) or iv <= 0:
        errs.append("interval_s not a positive number")
    if not is_uint(o.get("drops")):
        errs.append("drops not a non-negative integer")
    hs = o.get("histograms")
    if not isinstance(hs, dict):
        return errs + ["histograms missing"]
    for n in NAMES:
        if n not in hs:
            errs.append("histogram %s missing" % n)
    for n, h in hs.items():
        errs += check_hist(n, h)
    for w in o.get("top_waits", []):
        for k in ("type", "wait_ns", "pid", "comm", "holder"):
            if k not in w:
                errs.append("top_waits entry without %s" % k)
        if w.get("holder") is not None:
            for k in ("pid", "comm", "op", "phase"):
                if k not in w["holder"]:
                    errs.append("top_waits holder without %s" % k)
    for t in o.get("top_holds", []):
        for k in ("kind", "total_ns", "write_ns", "read_ns", "pid", "comm", "op"):
            if k not in t:
                errs.append("top_holds entry without %s" % k)
    return errs


def load(path):
    objs = []
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if line.strip():
                objs.append((i, json.loads(line)))
    return objs


def cmd_schema(path):
    try:
        objs = load(path)
    except (OSError, ValueError) as e:
        report(False, "%s parses as JSON lines" % path, str(e))
        return
    report(len(objs) > 0, "%s has at least one object" % path, "empty")
    for i, o in objs:
        errs = check_object(o)
        report(not errs, "%s line %d matches schema 1" % (path, i), "; ".join(errs[:5]))


def expand(h):
    out = []
    for b in h["buckets"]:
        out += [slot(b["le"])] * b["count"]
    return sorted(out)


def cmd_hist(path, name, truth, tol_us, tol_pct, lower_us, contains):
    o = load(path)[-1][1]
    h = o["histograms"][name]
    truth = sorted(truth)
    tol = [int(tol_us * 1000 + v * tol_pct / 100) for v in truth]
    low = int(lower_us * 1000)
    what = "%s: %d samples (truth %s us)" % (name, len(truth),
                                            ",".join(str(v // 1000) for v in truth))
    if not truth:
        report(False, what, "no truth: the module reported no hold (mmls_hold failed?)")
        return
    if contains:
        report(h["count"] >= len(truth), what + ": count >= truth",
               "tool counted %d" % h["count"])
    else:
        report(h["count"] == len(truth), what + ": count",
               "tool counted %d" % h["count"])
        if h["count"] != len(truth):
            return
    got = expand(h)
    bad = []
    for v, t in zip(reversed(truth), reversed(tol)):
        ok_slots = set(range(slot(max(v - low, 0)), slot(v + t) + 1))
        for i in range(len(got) - 1, -1, -1):
            if got[i] in ok_slots:
                del got[i]
                break
        else:
            bad.append((v, sorted(ok_slots)))
    report(not bad, what + ": every sample in its log2 bucket",
           "unmatched truth ns (allowed slots): %s; tool slots %s" % (bad[:4], expand(h)))
    if contains:
        tm = truth[-1]
        report(-low - 2000 <= h["max"] - tm <= tol[-1],
               what + ": max %d ns vs truth %d (-%d/+%d ns allowed)" % (h["max"], tm, low + 2000, tol[-1]),
               "off by %d ns" % (h["max"] - tm))
        return
    ts = sum(truth)
    report(-len(truth) * (low + 2000) <= h["sum"] - ts <= sum(tol),
           what + ": sum %d ns vs truth %d (-%d/+%d ns allowed)" % (h["sum"], ts, len(truth) * (low + 2000), sum(tol)),
           "off by %d ns" % (h["sum"] - ts))
    tm = truth[-1]
    report(-low - 2000 <= h["max"] - tm <= tol[-1],
           what + ": max %d ns vs truth %d (-%d/+%d ns allowed)" % (h["max"], tm, low + 2000, tol[-1]),
           "off by %d ns" % (h["max"] - tm))


def main(argv):
    if len(argv) >= 3 and argv[1] == "schema":
        cmd_schema(argv[2])
    elif len(argv) >= 4 and argv[1] == "hist":
        tol_us, tol_pct, lower_us, contains, truth = 100.0, 1.0, 0.0, False, []
        args = argv[4:]
        while args:
            a = args.pop(0)
            if a == "--tol-us":
                tol_us = float(args.pop(0))
            elif a == "--tol-pct":
                tol_pct = float(args.pop(0))
            elif a == "--lower-us":
                lower_us = float(args.pop(0))
            elif a == "--contains":
                contains = True
            else:
                truth.append(int(a))
        cmd_hist(argv[2], argv[3], truth, tol_us, tol_pct, lower_us, contains)
    elif len(argv) == 4 and argv[1] == "get":
        o = load(argv[2])[-1][1]
        print(eval(argv[3], {"o": o}))
        return 0
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, LookupError, ValueError, TypeError) as e:
        # a missing file or key is a failed check, never a silent pass
        print("not ok - mmlockstat_check.py %s: %s: %s"
              % (" ".join(sys.argv[1:3]), type(e).__name__, e))
        sys.exit(3)
