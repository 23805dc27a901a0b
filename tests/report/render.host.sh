#!/usr/bin/env bash
# The report renderer on data from a real (tool-less) run of the workload on
# the host: page, summary and trace are complete and consistent, Chromium
# renders the page cleanly, and a failing run is shown, not skipped.
# (No BPF here: scripts/experiment refuses to run the tools off the guest.)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-report.sh"
plan $((2 + 2 + REPORT_CHECKS + 1 + 1 + 1 + 5))
make -s -C "$TOP/workloads" >/dev/null || abort "build workloads"
od=$(test_out report-host)
rm -rf "$od/ok" "$od/bad" "$od/tampered" "$od/refuse"

TOOLS=none "$TOP/scripts/experiment" --size-mb 32 --reps 2 --modes downgrade \
	"$od/ok/raw" >"$od/ok.log" 2>&1
check "experiment (TOOLS=none, 32 MiB, 2 reps) exits 0" test $? = 0
# scripts/report writes host.json with the kernel's source package.
src="linux-source-6.1 6.1.999-1 (test), Linux 6.1.999"
printf '{"kernel_source": "%s", "accel": "tcg, single-threaded"}\n' "$src" >"$od/ok/raw/host.json"
"$PY" "$TOP/scripts/render_report.py" "$od/ok" >>"$od/ok.log" 2>&1
check "render_report exits 0 on a clean run" test $? = 0
check "summary.md names the kernel's source package from host.json" \
	grep -qF "| kernel source | $src |" "$od/ok/summary.md"
check "index.html names it too" grep -qF "<td>kernel source</td><td>$src</td>" "$od/ok/index.html"
check_report "$od/ok" --no-tools downgrade
check_chromium "$od/ok/index.html" "$od/ok"

# The consistency check can fail: change one digit of one number; it must
# fail on that number (it passed on the untouched copy above).
cp -r "$od/ok" "$od/tampered"
what=$("$PY" "$TOP/tests/report/tamper_summary.py" "$od/tampered/summary.md")
"$PY" "$TOP/tests/report/check_summary.py" "$od/tampered" --no-tools downgrade >"$od/tampered.log"
rc=$?
read -r mode _ rep _ _ _ _ new _ <<<"$what"
bad=$(grep -m1 '^not ok' "$od/tampered.log")
if [ "$rc" = 1 ] && [[ $bad == *"$mode rep $rep munmap: got summary $new"* ]]; then
	ok "check_summary.py catches a changed number in summary.md ($what)"
else
	fail "check_summary.py catches a changed number ($what): exit $rc, ${bad:-no failing check}"
fi

# The experiment refuses the BPF tools outside the guest.
"$TOP/scripts/experiment" --size-mb 16 --reps 1 "$od/refuse" >"$od/refuse.log" 2>&1
rc=$?
if [ "$rc" = 2 ] && grep -q 'only inside the mmlockscope guest' "$od/refuse.log"; then
	ok "experiment refuses to load BPF tools on the host"
else
	fail "experiment refuses to load BPF tools on the host: exit $rc, want 2 and 'only inside the mmlockscope guest'"
fi

# A real failure: a size larger than memory makes the workload exit 2.
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
TOOLS=none "$TOP/scripts/experiment" --size-mb $((avail + 4096)) --reps 1 \
	--modes downgrade "$od/bad/raw" >"$od/bad.log" 2>&1
check_eq "experiment exits 1 when the workload fails" "$?" 1
"$PY" "$TOP/scripts/render_report.py" "$od/bad" >>"$od/bad.log" 2>&1
check_eq "render_report exits 1 when a run failed" "$?" 1
check "summary.md lists the failure" grep -q 'workload exited with status 2: munmap_test: -s' "$od/bad/summary.md"
check "index.html shows the failure" grep -q "class='fail'" "$od/bad/index.html"
# the host has no vm.munmap_lock_mode: its one column is "stock"
check "status table marks the run FAILED" grep -q '| stock | \*\*FAILED\*\*' "$od/bad/summary.md"
finish
