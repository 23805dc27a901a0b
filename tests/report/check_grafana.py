#!/usr/bin/python3
"""check_grafana.py DASHBOARD.json RULES.yml: the Grafana dashboard is
structurally valid (Grafana is not installable here) and shows what the
exporter measures; every PromQL expression in it is written to RULES.yml
as a recording rule, for `promtool check rules` to parse with Prometheus's
own parser (Grafana's macros replaced by constants).

TAP (tests/report/taplib.py), the checks listed in CHECKS below. The
negative ones (no overlap, no undefined variable) run their detector on a
case that must trip it first (a positive control)."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import eq, run, want  # noqa: E402

TOP_KEYS = ("title", "uid", "panels", "schemaVersion", "templating")
HEATMAPS = ("write_hold", "read_hold", "read_wait", "write_wait")


def overlaps(panels):
    """The first pair of grid cells two panels share, or None."""
    cells = {}
    for p in panels:
        g = p["gridPos"]
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                if (x, y) in cells:
                    return (cells[(x, y)], p.get("id"), (x, y))
                cells[(x, y)] = p.get("id")
    return None


def used_vars(panel):
    """$variables a panel uses (datasource and expressions)."""
    s = json.dumps(panel.get("datasource", {}))
    out = set(re.findall(r"\$\{?(\w+)", s))
    for t in panel.get("targets", []):
        out |= set(re.findall(r"\$\{?(\w+)", t.get("expr", "")))
    return {v for v in out if not v.startswith("__")}


def main(argv):
    path, rules = argv
    st = {}

    def d():
        if "d" not in st:
            with open(path) as f:
                st["d"] = json.load(f)
        return st["d"]

    def panels():
        return d()["panels"]

    def exprs():
        return [t.get("expr", "") for p in panels() for t in p.get("targets", [])]

    def key(k):
        want(k in d(), "top-level keys", sorted(d()), "to include " + k)

    def ids():
        i = [p.get("id") for p in panels()]
        want(len(set(i)) == len(i) and all(isinstance(x, int) for x in i),
             "panel ids", i, "unique integers")
        return "%d panels" % len(i)

    def grid():
        bad = [p.get("id") for p in panels()
               if not (p.get("type") and p.get("title")
                       and 0 <= p["gridPos"]["x"]
                       and p["gridPos"]["x"] + p["gridPos"]["w"] <= 24
                       and p["gridPos"]["h"] > 0)]
        want(not bad, "panels without type/title or outside 24 columns", bad,
             "none")

    def no_overlap():
        ctl = [{"id": 1, "gridPos": {"x": 0, "y": 0, "w": 12, "h": 8}},
               {"id": 2, "gridPos": {"x": 11, "y": 7, "w": 4, "h": 4}}]
        want(overlaps(ctl), "control: overlapping panels", "not detected",
             "detected")
        o = overlaps(panels())
        want(o is None, "overlapping panels (ids, cell)", o, "none")
        return "a control overlap is detected"

    def targets():
        no = [p["id"] for p in panels() for t in p.get("targets", [])
              if not (t.get("expr") and t.get("refId"))]
        want(exprs(), "targets", 0, ">= 1")
        want(not no, "panels with a target lacking expr or refId", no, "none")
        return "%d targets" % len(exprs())

    def variables():
        defined = {v["name"] for v in d()["templating"]["list"]}
        ctl = used_vars({"targets": [{"expr": 'x{mode=~"$nosuch"}'}]})
        want(ctl - defined == {"nosuch"}, "control: an undefined variable",
             ctl - defined, "{'nosuch'}")
        used = set()
        for p in panels():
            used |= used_vars(p)
        want("mode" in used, "variables used", sorted(used), "to include mode")
        want(used <= defined, "undefined variables", sorted(used - defined),
             "none (defined: %s)" % " ".join(sorted(defined)))
        return "uses %s; a control undefined one is found" % " ".join(sorted(used))

    def heatmap(h):
        names = " ".join(t["expr"] for p in panels() if p["type"] == "heatmap"
                         for t in p["targets"])
        want("mmap_lock_%s_seconds_bucket" % h in names, "heatmap targets",
             names[:120], "to query mmap_lock_%s_seconds_bucket" % h)

    def heat_format():
        f = [t.get("format") for p in panels() if p["type"] == "heatmap"
             for t in p["targets"]]
        want(f and all(x == "heatmap" for x in f), "heatmap target formats",
             f, "all 'heatmap'")

    def p99():
        want(any("histogram_quantile(0.99" in e for e in exprs()),
             "p99 over time panel", "none", "a histogram_quantile(0.99, ...)")

    def contention():
        want(any("_wait_seconds_count" in e for e in exprs()),
             "contention count panel", "none", "a *_wait_seconds_count rate")

    def write_rules():
        with open(rules, "w") as f:
            f.write("groups:\n  - name: grafana\n    rules:\n")
            for i, e in enumerate(exprs()):
                e = e.replace("$__rate_interval", "1m").replace('"$mode"', '".*"')
                f.write("      - record: mmlockscope:expr_%d\n        expr: %s\n"
                        % (i, json.dumps(e)))
        eq("rules written", sum(1 for l in open(rules) if "record:" in l),
           len(exprs()))
        return "%d rules in %s" % (len(exprs()), rules)

    checks = [("grafana: top-level key %s" % k, lambda k=k: key(k))
              for k in TOP_KEYS]
    checks += [
        ("grafana: panel ids unique integers", ids),
        ("grafana: every panel has type, title and a gridPos inside 24 columns",
         grid),
        ("grafana: panels do not overlap", no_overlap),
        ("grafana: every target has expr and refId", targets),
        ("grafana: every $variable used is defined", variables),
    ]
    checks += [("grafana: heatmap of %s" % h, lambda h=h: heatmap(h))
               for h in HEATMAPS]
    checks += [
        ("grafana: heatmap targets use format=heatmap", heat_format),
        ("grafana: p99 over time panel", p99),
        ("grafana: contention count panel", contention),
        ("grafana: every expression written as a rule for promtool",
         write_rules),
    ]
    run(checks)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
