#!/usr/bin/env bash
# The report renderer on data from a real (tool-less) run of the workload on
# the host: page, summary and trace are complete and consistent, Chromium
# renders the page cleanly, and a failing run is shown, not skipped.
# (No BPF here: scripts/experiment refuses to run the tools off the guest.)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-report.sh"
make -s -C "$TOP/workloads" >/dev/null || { fail "build workloads"; finish; }
od=$(test_out report-host)
rm -rf "$od/ok" "$od/bad"

TOOLS=none "$TOP/scripts/experiment" --size-mb 32 --reps 2 --modes downgrade \
	"$od/ok/raw" >"$od/ok.log" 2>&1
check "experiment (TOOLS=none, 32 MiB, 2 reps) exits 0" test $? = 0
/usr/bin/python3 "$TOP/scripts/render_report.py" "$od/ok" >>"$od/ok.log" 2>&1
check "render_report exits 0 on a clean run" test $? = 0
check_report "$od/ok"
check_chromium "$od/ok/index.html" "$od/ok"

# The consistency check can fail: change one digit of one number.
rm -rf "$od/tampered" && cp -r "$od/ok" "$od/tampered"
/usr/bin/python3 - "$od/tampered/summary.md" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
i = s.index("## Userspace-measured latency")
m = re.compile(r"\| (\d+)\.(\d\d) ms \|").search(s, i)
d = m.group(2)
new = "| %s.%s%d ms |" % (m.group(1), d[0], (int(d[1]) + 5) % 10)
open(sys.argv[1], "w").write(s[:m.start()] + new + s[m.end():])
PY
if /usr/bin/python3 "$TOP/tests/report/check_summary.py" "$od/tampered" >"$od/tampered.log"; then
	fail "check_summary.py catches a changed number in summary.md"
else
	ok "check_summary.py catches a changed number in summary.md ($(grep -m1 'not ok' "$od/tampered.log" | cut -c8-120))"
fi

# The experiment refuses the BPF tools outside the guest.
"$TOP/scripts/experiment" --size-mb 16 --reps 1 "$od/refuse" >"$od/refuse.log" 2>&1
rc=$?
if [ "$rc" = 2 ] && grep -q 'only inside the mmlockscope guest' "$od/refuse.log"; then
	ok "experiment refuses to load BPF tools on the host"
else
	fail "experiment refuses to load BPF tools on the host: exit $rc"
fi

# A real failure: a size larger than memory makes the workload exit 2.
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
TOOLS=none "$TOP/scripts/experiment" --size-mb $((avail + 4096)) --reps 1 \
	--modes downgrade "$od/bad/raw" >"$od/bad.log" 2>&1
check "experiment exits 1 when the workload fails" test $? = 1
/usr/bin/python3 "$TOP/scripts/render_report.py" "$od/bad" >>"$od/bad.log" 2>&1
check "render_report exits 1 when a run failed" test $? = 1
check "summary.md lists the failure" grep -q 'workload exited with status 2: munmap_test: -s' "$od/bad/summary.md"
check "index.html shows the failure" grep -q "class='fail'" "$od/bad/index.html"
check "status table marks the mode FAILED" grep -q '| downgrade | \*\*FAILED\*\*' "$od/bad/summary.md"
finish
