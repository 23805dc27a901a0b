# shellcheck shell=bash
# tests/report/lib-report.sh: checks shared by the report tests (sourced
# after tests/lib.sh).

# The checks check_report prints (for the callers' plans).
REPORT_CHECKS=8

# external_refs: read HTML on stdin, print its first reference to anything
# outside the page (scripts, styles, images, fonts), exit 1 if none.
external_refs() {
	grep -oiE -m1 '<script[^>]+src=[^>]*|<link[^>]+href=[^>]*|<img[^>]+src="?https?:[^>]*|url\(https?:[^)]*|@import[^;]*'
}

# check_report DIR [--no-tools] RUN...: (RUN: KERNEL/MODE or MODE,
# tests/report/reportlib.py) the rendered report is complete,
# self-contained, consistent with its raw JSON (check_summary.py), and
# trace.json is a Chrome trace of it (check_trace.py). REPORT_CHECKS checks.
check_report() {
	local d=$1 f ref raw
	shift
	# raw/kernels.json: scripts/report's layout; raw/meta.json: one bare
	# scripts/experiment run
	raw=raw/meta.json
	[ -e "$d/raw/kernels.json" ] && raw=raw/kernels.json
	for f in index.html summary.md trace.json $raw; do
		check "report has $f" test -s "$d/$f"
	done
	# Self-contained. Positive control: the same grep finds a reference.
	if ! external_refs <<<'<p><img src="https://example.org/a.png"></p>' >/dev/null; then
		fail "index.html is self-contained: the control reference was not found"
	elif ref=$(external_refs <"$d/index.html"); then
		fail "index.html is self-contained: it references $ref"
	else
		ok "index.html is self-contained (no external references; a control one is found)"
	fi
	check "index.html embeds SVG plots" grep -q '<svg' "$d/index.html"
	subtest "summary.md equals the raw JSON" "$PY" "$TOP/tests/report/check_summary.py" "$d" "$@"
	subtest "trace.json is a Chrome trace of the raw JSON" "$PY" "$TOP/tests/report/check_trace.py" "$d" "$@"
}

# check_chromium HTML OUTDIR: headless Chromium loads the page and saves a
# screenshot, no console message, nothing requested but the page (one
# check; tests/report/chromium_render.py says how, and why not --screenshot).
check_chromium() {
	SUBTEST_ERR=$2/chromium_render.err subtest "headless Chromium renders $1" \
		"$PY" "$TOP/tests/report/chromium_render.py" "$1" "$2"
}
