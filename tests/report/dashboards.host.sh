#!/usr/bin/env bash
# dashboards/: the Prometheus config passes promtool; the Grafana dashboard
# is structurally valid (Grafana is not installable here) and every PromQL
# expression in it parses with Prometheus's own parser (promtool check rules).
# promtool's acceptance counts only because, in the same run, it rejects a
# broken copy (a positive control for each).
. "$(dirname "$0")/../lib.sh"
plan 3
od=$(test_out report-dashboards)
command -v promtool >/dev/null || abort "promtool present: install Debian's prometheus (make deps)"

# promtool_accepts WHAT GOOD BAD: ok if `promtool check WHAT` accepts GOOD
# and rejects BAD.
promtool_accepts() {
	local what=$1 good=$2 bad=$3 rg rb
	promtool check "$what" "$good" >"$od/check-$what.log" 2>&1
	rg=$?
	promtool check "$what" "$bad" >"$od/check-$what-broken.log" 2>&1
	rb=$?
	if [ "$rg" = 0 ] && [ "$rb" != 0 ]; then
		ok "promtool check $what accepts $good (and rejects a broken copy: ...$(grep . "$od/check-$what-broken.log" | tail -n 1 | rev | cut -c1-70 | rev))"
	else
		fail "promtool check $what: exit $rg on $good (want 0; $(grep . "$od/check-$what.log" | tail -n 1 | cut -c1-160)), exit $rb on the broken copy $bad (want non-zero)"
	fi
}

# The control config: a scrape timeout longer than its interval.
sed 's/scrape_timeout: 2s/scrape_timeout: 9s/' "$TOP/dashboards/prometheus.yml" >"$od/broken-prometheus.yml"
promtool_accepts config "$TOP/dashboards/prometheus.yml" "$od/broken-prometheus.yml"

subtest "the Grafana dashboard is valid and shows what the exporter measures" \
	"$PY" "$TOP/tests/report/check_grafana.py" "$TOP/dashboards/mmlockscope-grafana.json" "$od/rules.yml"

# The control rules: the dashboard's rules with one expression cut short.
sed '0,/expr: "/s/expr: "/expr: "sum(/' "$od/rules.yml" >"$od/broken-rules.yml"
promtool_accepts rules "$od/rules.yml" "$od/broken-rules.yml"
finish
