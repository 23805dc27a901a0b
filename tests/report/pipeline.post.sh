#!/usr/bin/env bash
# Host side of pipeline.guest.sh: the report the guest wrote loads in
# headless Chromium with no console errors, and a screenshot is kept.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-report.sh"
plan 1
od=$(test_out report-guest)
[ -s "$od/report/index.html" ] || abort "chromium loads the guest's report: $od/report/index.html was not written"
check_chromium "$od/report/index.html" "$od/report"
finish
