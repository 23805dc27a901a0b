#!/usr/bin/env bash
# dashboards/: the Prometheus config passes promtool; the Grafana dashboard
# is structurally valid (Grafana is not installable here) and every PromQL
# expression in it parses with Prometheus's own parser (promtool check rules).
. "$(dirname "$0")/../lib.sh"
od=$(test_out report-dashboards)
if ! command -v promtool >/dev/null; then
	fail "promtool present: install Debian's prometheus (make deps)"
	finish
fi
promtool check config "$TOP/dashboards/prometheus.yml" >"$od/check-config.log" 2>&1
check "promtool check config dashboards/prometheus.yml" test $? = 0

/usr/bin/python3 - "$TOP/dashboards/mmlockscope-grafana.json" "$od/rules.yml" <<'PY' || _failed=1
import json, re, sys
d = json.load(open(sys.argv[1]))
bad = []
def check(what, cond):
    print(("ok - " if cond else "not ok - ") + "grafana: " + what)
    if not cond:
        bad.append(what)
for k in ("title", "uid", "panels", "schemaVersion", "templating"):
    check("top-level key %s" % k, k in d)
panels = d.get("panels", [])
ids = [p.get("id") for p in panels]
check("panel ids unique integers", len(set(ids)) == len(ids) and all(isinstance(i, int) for i in ids))
check("every panel has type, title and a gridPos inside 24 columns",
      all(p.get("type") and p.get("title") and 0 <= p["gridPos"]["x"]
          and p["gridPos"]["x"] + p["gridPos"]["w"] <= 24 and p["gridPos"]["h"] > 0
          for p in panels))
cells = set()
overlap = False
for p in panels:
    g = p["gridPos"]
    for x in range(g["x"], g["x"] + g["w"]):
        for y in range(g["y"], g["y"] + g["h"]):
            overlap |= (x, y) in cells
            cells.add((x, y))
check("panels do not overlap", not overlap)
vars_ = {v["name"] for v in d["templating"]["list"]}
exprs, no_expr, undef = [], [], set()
for p in panels:
    for t in p.get("targets", []):
        if not (t.get("expr") and t.get("refId")):
            no_expr.append(p["id"])
        exprs.append(t.get("expr", ""))
    undef |= set(re.findall(r"\$\{?(\w+)", json.dumps(p.get("datasource", {})))) - vars_
for e in exprs:
    undef |= {v for v in re.findall(r"\$(\w+)", e) if not v.startswith("__")} - vars_
check("%d targets, each with expr and refId" % len(exprs), exprs and not no_expr)
check("every $variable used is defined (%s)" % " ".join(sorted(vars_)), not undef)
heat = [p for p in panels if p["type"] == "heatmap"]
names = " ".join(t["expr"] for p in heat for t in p["targets"])
for h in ("write_hold", "read_hold", "read_wait", "write_wait"):
    check("heatmap of %s" % h, "mmap_lock_%s_seconds_bucket" % h in names)
check("heatmap targets use format=heatmap", all(t.get("format") == "heatmap" for p in heat for t in p["targets"]))
check("p99 over time panel", any("histogram_quantile(0.99" in e for e in exprs))
check("contention count panel", any("_wait_seconds_count" in e for e in exprs))
# Prometheus's parser checks the PromQL: Grafana macros become constants.
with open(sys.argv[2], "w") as f:
    f.write("groups:\n  - name: grafana\n    rules:\n")
    for i, e in enumerate(exprs):
        e = e.replace("$__rate_interval", "1m").replace('"$mode"', '".*"')
        f.write("      - record: mmlockscope:expr_%d\n        expr: %s\n" % (i, json.dumps(e)))
sys.exit(1 if bad else 0)
PY
promtool check rules "$od/rules.yml" >"$od/check-rules.log" 2>&1
check "every dashboard PromQL expression parses (promtool check rules)" test $? = 0
finish
