#!/usr/bin/env bash
# Host side of cmd.guest.sh: each experiment it ran renders into a report.
# The Python program's is complete and equals its raw JSON (check_report,
# with a Command runs table in place of munmap_test's latency table and a
# slice per run in trace.json); each failed run's report is still
# written, render_report exits 1, the Failures list gives the run's
# message and the Command runs row shows the run as it ended.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-report.sh"
N_OK=2 N_BAD=4 BAD=3
plan $((N_OK + REPORT_CHECKS + BAD * N_BAD))
od=$(test_out report-cmd)
mode=downgrade

# render NAME: sets RRC; COL is the run's column heading
render() {
	"$PY" "$TOP/scripts/render_report.py" "$od/$1" >"$od/$1/render.log" 2>&1
	RRC=$?
	COL=$mode
	grep -q '"mode_control": false' "$od/$1/raw/meta.json" 2>/dev/null && COL=stock
}
[ -d "$od/python/raw" ] || abort "cmd.guest.sh's experiments are in $od (it ran first)"
render python
check_eq "python: render_report exits 0 ($(tail -n 1 "$od/python/render.log"))" "$RRC" 0
check_report "$od/python" "$mode"
check "python: its Command runs row: exit 0, the ps-like reader's reads" \
	grep -qE "^\| $COL \| 0 \| 0 \| [0-9.]+ s \| none \| [1-9][0-9]* \|" "$od/python/summary.md"

# case_bad NAME ROW-REGEX: BAD checks
case_bad() {
	local name=$1 row=$2 msg
	render "$name"
	msg=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["errors"][0])' \
		"$od/$name/raw/$mode/status.json" 2>&1)
	check_eq "$name: render_report writes the report and exits 1" "$RRC $(test -s "$od/$name/index.html" && echo written)" "1 written"
	check "$name: the Failures list gives the run's message ($msg)" \
		grep -qF -- "- **$COL**: $msg" "$od/$name/summary.md"
	check "$name: its Command runs row shows /$row/" grep -qE "^\| $COL \| 0 \| $row" "$od/$name/summary.md"
}
case_bad fails '\*\*3\*\* \|'
case_bad hangs '\*\*TIMED OUT\*\* \(killed\) \|'
case_bad leaves '0 \| [0-9.]+ s \| [0-9]+ sleep \|'
case_bad nomunmap '0 \| [0-9.]+ s \| none \|'
finish
