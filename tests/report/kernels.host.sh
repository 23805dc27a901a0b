#!/usr/bin/env bash
# One report across kernels, rendered on the host from a two-kernel
# fixture (tests/report/make_fixture.py: the lab kernel's three modes and
# Debian's 6.12 with per-VMA lock data, in scripts/report's layout): the
# verdict comes first with a sentence per (kernel, mode) that states the
# fixture's numbers, the tables are consistent with the JSON and no wider
# than a column per run, the per-VMA lock rows are shown when mmlockstat
# printed them and their absence is no error, an unavailable kernel is
# listed under Failures while the other renders, and scripts/report itself
# reports kernels it cannot boot (an empty kernel cache: no guest starts).
# The Debian kernels boot in tests/tools/debian-kernels.host.sh, not here.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-report.sh"
RUNS=(lab/exclusive lab/downgrade lab/section debian-6.12/downgrade)
plan $((1 + REPORT_CHECKS + 1 + 2 + 1 + 3 + 5 + 4))
od=$(test_out report-kernels)
rm -rf "$od/two" "$od/novma" "$od/gone" "$od/nocache" "$od/cache"
fx() { "$PY" "$TOP/tests/report/make_fixture.py" "$@"; }

fx "$od/two" && "$PY" "$TOP/scripts/render_report.py" "$od/two" >"$od/two.log" 2>&1
check_eq "render_report exits 0 on the two-kernel fixture" "$?" 0
check_report "$od/two" "${RUNS[@]}"
subtest "the verdict states each run's numbers; tables fit" \
	"$PY" "$TOP/tests/report/check_verdict.py" "$od/two" "${RUNS[@]}"
# The per-VMA lock counts of the fixture (61234 faults took a VMA lock, 3
# fell back), in 6.12's column only.
check "summary.md has the per-VMA lock counts in 6.12's column" \
	grep -qF '| faults with a VMA lock | – | – | – | 61234 |' "$od/two/summary.md"
check "index.html plots vma_start_write's waits" \
	grep -qF 'vma_start_write: waits for VMA readers' "$od/two/index.html"
check_chromium "$od/two/index.html" "$od/two"

# An mmlockstat without the per-VMA lock fields: no error, no VMA rows, the
# verdict from the mmap_lock waits alone.
fx "$od/novma" --no-vma && "$PY" "$TOP/scripts/render_report.py" "$od/novma" >"$od/novma.log" 2>&1
check_eq "render_report exits 0 without per-VMA lock data" "$?" 0
if grep -q 'Per-VMA locks\|vma_write_wait' "$od/novma/summary.md"; then
	fail "no per-VMA lock rows without the data: $(grep -m1 'Per-VMA locks\|vma_write_wait' "$od/novma/summary.md")"
else
	ok "no per-VMA lock rows without the data"
fi
subtest "without per-VMA lock data the verdict still states each run's numbers" \
	"$PY" "$TOP/tests/report/check_verdict.py" "$od/novma" "${RUNS[@]}"

# A kernel that did not run: listed under Failures, the other renders.
fx "$od/gone" --unavailable debian-6.12 && "$PY" "$TOP/scripts/render_report.py" "$od/gone" >"$od/gone.log" 2>&1
check_eq "render_report exits 1 when a kernel did not run" "$?" 1
check "Failures lists the kernel and why" \
	grep -qF -- "- **debian-6.12**: Debian's 6.12 kernel is not unpacked" "$od/gone/summary.md"
check "the verdict says it FAILED" grep -qF -- "- **debian-6.12**: FAILED, not run" "$od/gone/summary.md"
check "the status table marks it FAILED" grep -qF '| debian-6.12 | **FAILED** |' "$od/gone/summary.md"
subtest "the lab kernel's runs still render, consistent with their JSON" \
	"$PY" "$TOP/tests/report/check_summary.py" "$od/gone" lab/exclusive lab/downgrade lab/section

# scripts/report with an empty kernel cache: neither kernel is there, no
# guest boots, both are failures in the page, exit 1.
mkdir -p "$od/cache"
MMLOCK_CACHE=$od/cache KERNELS="lab debian-6.12" SIZE_MB=16 REPS=1 OUT=$od/nocache \
	"$TOP/scripts/report" >"$od/nocache.log" 2>&1
check_eq "scripts/report exits 1 when no kernel is available" "$?" 1
check "it says so per kernel as it goes" grep -qF "report: [2/2] debian-6.12: FAILED: Debian's 6.12 kernel is not unpacked" "$od/nocache.log"
check "Failures lists both kernels" eval "grep -qF -- '- **lab**: the lab kernel is not built' '$od/nocache/summary.md' &&
	grep -qF -- \"- **debian-6.12**: Debian's 6.12 kernel is not unpacked\" '$od/nocache/summary.md'"
check "the page is written" grep -q "class='fail'" "$od/nocache/index.html"
finish
