#!/usr/bin/env bash
# make live end to end: scripts/live boots the guest with mmlockstat's
# Prometheus exporter forwarded to a host loopback port; `promtool check
# metrics` accepts what it serves; Debian's real Prometheus scrapes it with
# dashboards/prometheus.yml (target rewritten to the test's port) and a
# PromQL query returns the write-hold histogram.
. "$(dirname "$0")/../lib.sh"
od=$(test_out report-live)
for c in prometheus promtool curl; do
	command -v $c >/dev/null || { fail "$c present (make deps)"; finish; }
done
[ -x "$TOP/bpf/mmlockstat" ] || { fail "bpf/mmlockstat built (make tools)"; finish; }

free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
eport=$(free_port) pport=$(free_port)
SIZE_MB=128 "$TOP/scripts/live" --port "$eport" --duration 240 >"$od/live.log" 2>&1 &
lpid=$!
prom=
cleanup() {
	[ -n "$prom" ] && kill "$prom" 2>/dev/null && wait "$prom" 2>/dev/null
	kill "$lpid" 2>/dev/null && wait "$lpid" 2>/dev/null
}
trap cleanup EXIT

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
if [ "$up" = 0 ]; then
	fail "exporter reachable at $url: $(tail -3 "$od/live.log" | tr '\n' ' ' | cut -c1-300)"
	finish
fi
ok "exporter reachable through the forwarded loopback port ($url)"
promtool check metrics <"$od/metrics.txt" >"$od/check-metrics.log" 2>&1
check "promtool check metrics accepts the exporter's output" test $? = 0

sed "s/127\.0\.0\.1:9464/127.0.0.1:$eport/" "$TOP/dashboards/prometheus.yml" >"$od/prometheus.yml"
promtool check config "$od/prometheus.yml" >"$od/check-config.log" 2>&1
check "promtool check config (the test's copy)" test $? = 0
mkdir -p "$od/tsdb"
prometheus --config.file="$od/prometheus.yml" --storage.tsdb.path="$od/tsdb" \
	--web.listen-address="127.0.0.1:$pport" >"$od/prometheus.log" 2>&1 &
prom=$!
api=http://127.0.0.1:$pport/api/v1/query
got=0
for _ in $(seq 1 90); do
	# Non-zero buckets only: the workload must have produced write holds.
	if curl -sf --max-time 5 "$api" --data-urlencode \
		'query=sum by (le) (mmap_lock_write_hold_seconds_bucket) > 0' \
		-o "$od/query.json" &&
		/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["data"]["result"]; sys.exit(0 if len(r) >= 2 and all("le" in x["metric"] for x in r) else 1)' "$od/query.json"; then
		got=1
		break
	fi
	sleep 2
done
if [ "$got" = 1 ]; then
	ok "Prometheus scraped the guest: PromQL returns the write-hold histogram ($(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["data"]["result"]))' "$od/query.json") non-empty buckets)"
else
	fail "PromQL query for mmap_lock_write_hold_seconds_bucket: no data (see $od/prometheus.log, $od/query.json)"
fi
curl -sf --max-time 5 "$api" --data-urlencode \
	'query=histogram_quantile(0.99, sum by (le) (mmap_lock_write_hold_seconds_bucket))' -o "$od/p99.json"
check "histogram_quantile(0.99) over the write-hold buckets is a number" \
	/usr/bin/python3 -c 'import json,sys,math; r=json.load(open(sys.argv[1]))["data"]["result"]; v=float(r[0]["value"][1]); sys.exit(0 if v > 0 and not math.isnan(v) else 1)' "$od/p99.json"
# the dashboard's $mode variable: label_values(..., mode)
curl -sf --max-time 5 "${api%/query}/label/mode/values" -o "$od/modes.json"
check "the mode label has values for the dashboard's \$mode ($(cat "$od/modes.json" 2>/dev/null | head -c 120))" \
	/usr/bin/python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["data"]; sys.exit(0 if v and set(v) <= {"exclusive","downgrade","section","native"} else 1)' "$od/modes.json"
finish
