#!/usr/bin/python3
"""check_live.py: the JSON checks of tests/report/live.host.sh.

  check_live.py ready QUERY.json
      exit 0 if the PromQL answer holds >= 2 histogram buckets (the wait
      loop's condition; prints nothing)
  check_live.py prom DIR DASHBOARD.json
      TAP (tests/report/taplib.py) on what live.host.sh saved in DIR:
      metrics.txt (the exporter's page), up.json, query.json (non-zero
      write-hold buckets), p99.json, modes.json (label values of mode).
"""
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import run, want  # noqa: E402

MODES = {"exclusive", "downgrade", "section", "native"}


def result(path):
    with open(path) as f:
        r = json.load(f)
    want(r.get("status") == "success", os.path.basename(path) + " status",
         r.get("status"), "success")
    return r["data"]


def buckets(path):
    r = result(path)["result"]
    return [x for x in r if "le" in x["metric"]]


def main(argv):
    if argv[0] == "ready":
        try:
            return 0 if len(buckets(argv[1])) >= 2 else 1
        except Exception:
            return 1
    d, dash = argv[1], argv[2]
    f = lambda n: os.path.join(d, n)

    def served():
        with open(dash) as fh:
            exprs = [t.get("expr", "") for p in json.load(fh)["panels"]
                     for t in p.get("targets", [])]
        used = set(re.findall(r"\b(mmap_lock_\w+)", " ".join(exprs)))
        with open(f("metrics.txt")) as fh:
            have = {l.split("{")[0].split()[0] for l in fh
                    if l.strip() and not l.startswith("#")}
        want(used, "metrics the dashboard queries", "none", ">= 1")
        want(used <= have, "queried but not served", sorted(used - have),
             "none")
        return "%d metric names, all served" % len(used)

    def up():
        r = result(f("up.json"))["result"]
        v = [x["value"][1] for x in r if x["metric"].get("job") == "mmlockstat"]
        want(v == ["1"], "up{job=\"mmlockstat\"}", v, "['1']")

    def hist():
        b = buckets(f("query.json"))
        want(len(b) >= 2, "non-zero write-hold buckets", len(b), ">= 2")
        return "%d non-empty buckets" % len(b)

    def p99():
        r = result(f("p99.json"))["result"]
        want(len(r) == 1, "series", len(r), 1)
        v = float(r[0]["value"][1])
        want(v > 0 and not math.isnan(v) and not math.isinf(v), "p99 seconds",
             v, "a positive number")
        return "%.6f s" % v

    def modes():
        v = result(f("modes.json"))
        want(v and set(v) <= MODES, "mode label values", v,
             "non-empty, among %s" % sorted(MODES))
        return " ".join(v)

    run([("every metric the dashboard queries is served by the exporter",
          served),
         ("Prometheus scraped the target: up{job=\"mmlockstat\"} is 1", up),
         ("PromQL returns the write-hold histogram (non-zero buckets)", hist),
         ("histogram_quantile(0.99) over the write-hold buckets is a number",
          p99),
         ("the mode label has values for the dashboard's $mode", modes)])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
