#!/usr/bin/env bash
# Host side of pipeline.guest.sh: the report the guest wrote loads in
# headless Chromium with no console errors, and a screenshot is kept.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-report.sh"
od=$(test_out report-guest)
if [ -s "$od/report/index.html" ]; then
	check_chromium "$od/report/index.html" "$od/report"
else
	fail "chromium loads the guest's report: $od/report/index.html was not written"
fi
finish
