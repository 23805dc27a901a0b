#!/usr/bin/env bash
# The report pipeline end to end in the guest, on a small size: the
# experiment runs every mode under mmlockstat and munmapsnoop, the report is
# rendered and consistent with its raw JSON, and the numbers tell the story
# of each mode (tests/report/check_story.py): exclusive holds the write
# lock across the zap and blocks the readers for it; downgrade zaps under
# the read lock after a tiny write phase; section unmaps in section-size
# windows. Chromium loads this report on the host afterwards
# (pipeline.post.sh): under TCG it took minutes.
#
# The story checks here are facts the tools report (flags, counts, one
# probe-timed interval inside another), not timing ratios; the ratios
# (how long the readers waited, how short the downgrade's write phase is)
# run on the guest's own clock in story.icount.sh. Measured: 22 runs of
# this file's experiment in one guest (scripts/vm-run --mem 2G --cpus 2,
# the experiment command below in a loop) while three other guests loaded
# the 2 host cores: every check held in all 22. The one fact that needs a
# reader to run during the exclusive hold (munmapsnoop saw >= 1 read
# waiter) saw 3 in every run.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-report.sh"
MODES_RUN=(exclusive downgrade section)
plan $((2 + REPORT_CHECKS + ${#MODES_RUN[@]}))
od=$(test_out report-guest)
rm -rf "$od/report"
mkdir -p "$od/report"
size=${MMLOCK_REPORT_SIZE_MB:-128}

SIZE_MB=$size REPS=1 MODES="${MODES_RUN[*]}" \
	"$TOP/scripts/experiment" "$od/report/raw" >"$od/experiment.log" 2>&1
rc=$?
if [ "$rc" = 0 ]; then
	ok "experiment ($size MiB, 1 rep, ${MODES_RUN[*]}, with tools) exits 0"
else
	fail "experiment exits 0: exit $rc: $(grep -m3 'FAILED\|experiment: [a-z]' "$od/experiment.log" | tail -1 | cut -c1-200)"
fi
"$PY" "$TOP/scripts/render_report.py" "$od/report" >"$od/render.log" 2>&1
check_eq "render_report exits 0" "$?" 0
check_report "$od/report" "${MODES_RUN[@]}"
for m in "${MODES_RUN[@]}"; do
	subtest "$m: the numbers tell the story" "$PY" "$TOP/tests/report/check_story.py" "$od/report/raw" "$m"
done
finish
