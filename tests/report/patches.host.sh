#!/usr/bin/env bash
# make report PATCHES= (scripts/report): bad parameters exit 2 with the
# fix; a patch that does not apply and one that does not build each fail
# before any guest boots, name the hunk or the compiler error, still write
# a report that says so, and leave no build behind. The comparison's rule
# (tests/report/check_change.py): ranges of 3+ runs that overlap are "no
# difference", fewer runs are never called; on a made-up lab + patched
# report, the comparison table equals its raw JSON (check_summary.py).
# Host only: nothing boots.
. "$(dirname "$0")/../lib.sh"
plan 15
od=$(test_out report-patches)
rm -rf "${od:?}"/*
R=$TOP/scripts/report
lab=$("$TOP/scripts/build-kernel" --print-dir 2>/dev/null) ||
	abort "the lab kernel is built (make kernel): PATCHES= builds on it"

# expect2 WHAT PATTERN ENV...: scripts/report exits 2, stderr matches
expect2() {
	local what=$1 pat=$2 rc
	shift 2
	env "$@" OUT="$od/bad" "$R" >"$od/out" 2>"$od/err"
	rc=$?
	if [ "$rc" = 2 ] && grep -qE "$pat" "$od/err"; then
		ok "$what (exit 2: $(head -n 1 "$od/err"))"
	else
		fail "$what: want exit 2 and /$pat/, got exit $rc: $(head -n 2 "$od/err" | tr '\n' ' ')"
	fi
}
expect2 "PATCHES of a missing file" "^report: PATCHES: '/nonexistent.patch' is not a readable file$" \
	PATCHES=/nonexistent.patch KERNELS=lab
expect2 "KERNELS=patched without PATCHES" "^report: KERNELS: 'patched' needs PATCHES=FILE" \
	KERNELS="lab patched" PATCHES=

# report_fails NAME PATCH: scripts/report with PATCH on lab + patched;
# sets RC, SECS, PATCHF
report_fails() {
	local t0
	PATCHF=$2
	t0=$(date +%s)
	KERNELS=lab MODES=downgrade REPS=1 SIZE_MB=16 PATCHES=$2 OUT="$od/$1" \
		timeout 1800 "$R" >"$od/$1.out" 2>"$od/$1.err"
	RC=$? SECS=$(($(date +%s) - t0))
}
# failed_report NAME MSG-REGEX: 4 checks on what report_fails left
failed_report() {
	local name=$1 msg=$2 key
	check_eq "$name: scripts/report exits 1 (after ${SECS}s)" "$RC" 1
	check "$name: stderr names it: /$msg/ ($(grep -m1 'FAILED before any run' "$od/$name.err" | cut -c1-250))" \
		grep -qE "FAILED before any run: .*$msg" "$od/$name.err"
	check "$name: no guest booted (no console log), the report's Failures say why" \
		sh -c "[ ! -e '$od/$name/logs/lab/console.log' ] && [ ! -e '$od/$name/logs/patched/console.log' ] &&
		grep -qE '^- \*\*patched\*\*: .*$msg' '$od/$name/summary.md' &&
		grep -qE '^- \*\*lab\*\*: not run: the patched kernel failed to build' '$od/$name/summary.md'"
	key=$("$TOP/scripts/build-kernel" --patches "$PATCHF" --print-key-dir)
	check "$name: no build left in the cache ($key)" test ! -e "$key/linux"
}

# 1. Does not apply: its context is not in mm/mmap.c. Fails in seconds,
# before the 2.6 GB build is copied.
cat >"$od/noapply.patch" <<'EOF'
--- a/mm/mmap.c
+++ b/mm/mmap.c
@@ -1,3 +1,4 @@
 this line is not in mm/mmap.c
+/* nor is this one */
 and neither is this one
 nor this
EOF
report_fails noapply "$od/noapply.patch"
failed_report noapply "does not apply.*mm/mmap.c: Hunk #1 FAILED at 1"
check "noapply: fails before the series' build is copied (no copy step in its progress; ${SECS}s)" \
	sh -c "grep -q 'report: patched: build-kernel: ' '$od/noapply.out' '$od/noapply.err' &&
	! grep -q \"copying the series' build\" '$od/noapply.out' '$od/noapply.err'"

# 2. Does not build: applies, then the compiler stops at it. The failed
# build (a copy of the lab build) is removed afterwards.
mkdir -p "$od/nb/a/mm" "$od/nb/b/mm"
cp "$lab/linux/mm/mmap.c" "$od/nb/a/mm/mmap.c"
sed '/^static int sysctl_munmap_lock_mode/a #error "mmlockscope: this patch does not build"' \
	"$od/nb/a/mm/mmap.c" >"$od/nb/b/mm/mmap.c"
(cd "$od/nb" && diff -u a/mm/mmap.c b/mm/mmap.c) | sed '1,2s/\t.*//' >"$od/nobuild.patch"
report_fails nobuild "$od/nobuild.patch"
failed_report nobuild "kernel build failed.*mm/mmap.c:[0-9]+:[0-9]+: error"
check "nobuild: the build log has the compiler's message" grep -q "mm/mmap.c:.*error" "$od/nobuild/logs/patched/build.log"

# 3. The comparison's rule, on made-up runs.
subtest "the change column's rule" "$PY" "$TOP/tests/report/check_change.py"

# 4. A lab + patched report made up from the fixture's lab kernel: the
# patched kernel's calls take twice as long.
fx=$od/fixture
"$PY" "$TOP/tests/report/make_fixture.py" "$fx" >/dev/null &&
"$PY" - "$fx/raw" <<'PY'
import json, os, shutil, sys
raw = sys.argv[1]
shutil.rmtree(os.path.join(raw, "debian-6.12"))
shutil.copytree(os.path.join(raw, "lab"), os.path.join(raw, "patched"))
json.dump({"kernels": ["lab", "patched"]}, open(os.path.join(raw, "kernels.json"), "w"))
for mode in ("exclusive", "downgrade", "section"):
    f = os.path.join(raw, "patched", mode, "munmapsnoop.jsonl")
    cs = [json.loads(l) for l in open(f)]
    with open(f, "w") as out:
        for c in cs:
            for k in ("total_ns", "write_hold_ns", "read_hold_ns"):
                c[k] *= 2
            out.write(json.dumps(c) + "\n")
PY
"$PY" "$TOP/scripts/render_report.py" "$fx" >"$fx/render.log" 2>&1
rrc=$?
check "fixture (lab + patched): renders (exit $rrc), with a Patch comparison table" \
	sh -c "[ $rrc = 0 ] && grep -q '^## Patch comparison (lab → patched)' '$fx/summary.md'"
subtest "fixture: the tables equal the raw JSON" "$PY" "$TOP/tests/report/check_summary.py" "$fx" \
	lab/exclusive lab/downgrade patched/exclusive patched/downgrade
finish
