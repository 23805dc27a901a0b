# shellcheck shell=bash
# tests/report/lib-report.sh: checks shared by the report tests (sourced
# after tests/lib.sh).

# check_report DIR: the rendered report is complete, self-contained,
# consistent with its raw JSON, and trace.json is a Chrome trace.
check_report() {
	local d=$1
	for f in index.html summary.md trace.json raw/meta.json; do
		check "report has $f" test -s "$d/$f"
	done
	# Self-contained: no external scripts, images, styles or fonts.
	if grep -qiE '<script[^>]+src=|<link[^>]+href=|<img[^>]+src="?https?:|url\(https?:|@import' "$d/index.html"; then
		fail "index.html is self-contained: $(grep -oiE '<script[^>]+src=[^>]*|<link[^>]+href=[^>]*|url\(https?:[^)]*' "$d/index.html" | head -1)"
	else
		ok "index.html is self-contained (no external references)"
	fi
	check "index.html embeds SVG plots" grep -q '<svg' "$d/index.html"
	/usr/bin/python3 "$TOP/tests/report/check_summary.py" "$d" || _failed=1
	/usr/bin/python3 - "$d/trace.json" <<'PY' || _failed=1
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
x = [e for e in ev if e["ph"] == "X"]
good = x and all(isinstance(e["ts"], (int, float)) and e["dur"] >= 0
                 and "pid" in e and "tid" in e and e["name"] for e in x)
print(("ok - " if good else "not ok - ") +
      "trace.json: %d complete (X) slices with ts/dur/pid/tid" % len(x))
sys.exit(0 if good else 1)
PY
}

# check_chromium HTML OUTDIR: headless Chromium loads the page without
# console messages and saves a screenshot. The page is static (no scripts,
# no external references: check_report), so no virtual time budget, which
# others report hangs headless Chromium now and then (html2image issue 97,
# chrome-headless-render-pdf issue 29). A stop-9 CI run waited out its
# 120 s on a page that renders here in 1.5-7 s (not reproduced: 240 of 240
# runs rendered, half of them with virtual time).
# Chromium itself hanging is retried once, with a fresh profile; a page
# that fails to render twice fails the test. --disable-dev-shm-usage: a
# small /dev/shm (containers) is the other known cause of such hangs.
check_chromium() {
	local html=$1 od=$2 prof rc try log note=
	if ! command -v chromium >/dev/null; then
		fail "chromium loads the report: chromium not installed (make deps)"
		return
	fi
	rm -f "$od/screenshot.png" "$od"/chromium*.log
	for try in 1 2; do
		log=$od/chromium.log
		[ "$try" = 1 ] || log=$od/chromium.$try.log
		prof=$(mktemp -d)
		timeout -k 10 "${CHROMIUM_TIMEOUT:-60}" chromium --headless \
			--no-sandbox --disable-gpu --disable-dev-shm-usage \
			--disable-background-networking --disable-component-update \
			--disable-sync --no-first-run --user-data-dir="$prof" \
			--host-resolver-rules='MAP * ~NOTFOUND' \
			--run-all-compositor-stages-before-draw \
			--enable-logging=stderr --v=0 --window-size=1280,4000 \
			--screenshot="$od/screenshot.png" "file://$html" \
			>"$log" 2>&1
		rc=$?
		rm -rf "$prof"
		[ "$rc" = 0 ] && [ -s "$od/screenshot.png" ] && break
		note="; attempt 1 exit $rc, log $od/chromium.log"
		echo "# chromium attempt $try: exit $rc (log $log)"
	done
	if [ "$rc" = 0 ] && [ -s "$od/screenshot.png" ]; then
		ok "chromium rendered the report: screenshot $od/screenshot.png${note:+ (attempt 2$note)}"
	else
		fail "chromium rendered the report: exit $rc twice (logs $od/chromium.log, $od/chromium.2.log)"
	fi
	# Not blank: text and plots leave thousands of dark pixels.
	if /usr/bin/python3 -c 'import sys; from PIL import Image
im = Image.open(sys.argv[1]).convert("L")
sys.exit(0 if sum(im.histogram()[:128]) > 5000 else 1)' "$od/screenshot.png" 2>/dev/null; then
		ok "the screenshot shows the page (not blank)"
	else
		fail "the screenshot shows the page: blank or unreadable ($od/screenshot.png)"
	fi
	if grep -q ':CONSOLE' "$log"; then
		fail "no console messages: $(grep -m1 ':CONSOLE' "$log" | cut -c1-200)"
	else
		ok "no console errors or messages while loading the report"
	fi
}
