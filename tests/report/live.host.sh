#!/usr/bin/env bash
# make live end to end: scripts/live boots the guest with mmlockstat's
# Prometheus exporter forwarded to a host loopback port; `promtool check
# metrics` accepts what it serves; Debian's real Prometheus scrapes it with
# dashboards/prometheus.yml (target rewritten to the test's port, listening
# on loopback only) and PromQL queries return the write-hold histogram.
. "$(dirname "$0")/../lib.sh"
plan 3
od=$(test_out report-live)
for c in prometheus promtool curl; do
	command -v $c >/dev/null || abort "$c present (make deps)"
done
[ -x "$TOP/bpf/mmlockstat" ] || abort "bpf/mmlockstat built (make tools)"
rm -rf "$od/tsdb" "$od"/*.json "$od/metrics.txt"

free_port() {
	"$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
eport=$(free_port) pport=$(free_port)
SIZE_MB=128 "$TOP/scripts/live" --port "$eport" --duration 240 >"$od/live.log" 2>&1 &
lpid=$!
at_exit "kill $lpid 2>/dev/null; wait $lpid 2>/dev/null"

# Wait for the guest (boot, tool attach): a condition, not a check.
url=http://127.0.0.1:$eport/metrics
up=0
for _ in $(seq 1 300); do
	kill -0 "$lpid" 2>/dev/null || break
	if curl -sf --max-time 5 "$url" -o "$od/metrics.txt" &&
		grep -q '^mmap_lock_write_hold_seconds_count' "$od/metrics.txt"; then
		up=1
		break
	fi
	sleep 1
done
[ "$up" = 1 ] || abort "exporter reachable at $url: $(tail -3 "$od/live.log" | tr '\n' ' ' | cut -c1-300)"
ok "exporter reachable through the forwarded loopback port ($url)"

# promtool's acceptance counts because it rejects a broken copy (control).
promtool check metrics <"$od/metrics.txt" >"$od/check-metrics.log" 2>&1
rg=$?
{ cat "$od/metrics.txt"; echo 'mmap_lock_write_hold_seconds_count{mode="x" 1'; } |
	promtool check metrics >"$od/check-metrics-broken.log" 2>&1
rb=$?
if [ "$rg" = 0 ] && [ "$rb" != 0 ]; then
	ok "promtool check metrics accepts the exporter's output (and rejects it with a broken line)"
else
	fail "promtool check metrics: exit $rg on the exporter's output (want 0: $(head -c 200 "$od/check-metrics.log")), exit $rb with a broken line (want non-zero)"
fi

sed "s/127\.0\.0\.1:9464/127.0.0.1:$eport/" "$TOP/dashboards/prometheus.yml" >"$od/prometheus.yml"
mkdir -p "$od/tsdb"
prometheus --config.file="$od/prometheus.yml" --storage.tsdb.path="$od/tsdb" \
	--web.listen-address="127.0.0.1:$pport" >"$od/prometheus.log" 2>&1 &
prom=$!
at_exit "kill $prom 2>/dev/null; wait $prom 2>/dev/null"
api=http://127.0.0.1:$pport/api/v1
query() {	# query FILE PROMQL
	curl -sf --max-time 5 "$api/query" --data-urlencode "query=$2" -o "$od/$1"
}
# Wait until the workload's write holds are in Prometheus (condition).
for _ in $(seq 1 90); do
	query query.json 'sum by (le) (mmap_lock_write_hold_seconds_bucket) > 0' &&
		"$PY" "$TOP/tests/report/check_live.py" ready "$od/query.json" && break
	sleep 2
done
query up.json 'up'
query p99.json 'histogram_quantile(0.99, sum by (le) (mmap_lock_write_hold_seconds_bucket))'
curl -sf --max-time 5 "$api/label/mode/values" -o "$od/modes.json"
subtest "Prometheus scrapes the guest and answers the dashboard's queries" \
	"$PY" "$TOP/tests/report/check_live.py" prom "$od" "$TOP/dashboards/mmlockscope-grafana.json"
finish
