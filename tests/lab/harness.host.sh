#!/usr/bin/env bash
# The test harness itself (tests/run-files + tests/harness) on made-up test
# files: it passes a good file and fails a missing check, a failing check,
# a non-zero exit, a file that never ran or died before its plan (no
# TAP at all), an unexpected skip and a kernel
# splat while a guest file ran; it counts skips apart, reads a '#' inside a
# check's text as text, and runs a failing file exactly once. A file's
# kernel-log check reads the log from its own start marker: a splat before
# it is not its own. A file's run on a Debian kernel keeps its outputs
# apart from its lab kernel run's.
. "$(dirname "$0")/../lib.sh"
plan 20
d=$(test_out lab-harness)
rm -rf "$d" && mkdir -p "$d/t" "$d/bin"
t=$d/t

# Each made-up file sources the real lib.sh.
mk() { printf '. %q\n%s\nfinish\n' "$TOP/tests/lib.sh" "$2" >"$t/$1.sh"; }
mk good 'plan 2; ok one; check two true'
mk short 'plan 3; ok one; ok two'
mk notok 'plan 2; ok one; check_eq "two" 1 2'
mk exit3 'plan 1; ok one; exit 3'
mk skipx 'plan 2; ok one; skip "unlisted thing" "no reason to"'
mk skipok 'plan 2; ok one; skip "listed thing" "cannot apply here"'
mk hash 'plan 1; ok "text with # SKIP inside is text"'
mk once "plan 1; echo run >>$d/once.count; fail \"always fails\""
mk splat 'plan 1; ok "a clean file"; echo "WARNING: CPU: 0 PID: 1 at mm/mmap.c:1 fake+0x0" >>"$MMLOCK_KMSG"'
mk clean 'plan 1; ok "a clean file"'
printf 'exit 2\n' >"$t/silent.sh"	# as a syntax error: no TAP at all
mk after 'plan 1; ok "a clean file after the splat"'
mk outs 'plan 1; echo "$MMLOCK_KERNEL" >"$(test_out made-up)/k"; ok wrote'
cat >"$d/skips" <<EOF
# made-up expected skips
host | $t/skipok.sh | listed thing | the test says so
EOF
# A stub dmesg prints what was written to the fake /dev/kmsg.
printf '#!/bin/sh\ncat "$MMLOCK_KMSG"\n' >"$d/bin/dmesg"
chmod +x "$d/bin/dmesg"
: >"$d/kmsg"

# harness NAME FILE...: record FILEs (host tag), then count them.
harness() {
	local name=$1 out=$d/$1 f
	shift
	mkdir -p "$out/tap"
	for f in "$@"; do printf 'host:%s\t%s\n' "${f//\//_}" "$f"; done >"$out/tap/order"
	MMLOCK_TEST_OUT=$out "$TOP/tests/run-files" host "$@" >"$out/run.log" 2>&1
	MMLOCK_EXPECTED_SKIPS=$d/skips /usr/bin/perl "$TOP/tests/harness" "$out" >"$out/harness.log" 2>&1
	rc=$?
	last=$(tail -n 1 "$out/harness.log")
}

# Positive control: a good file, an expected skip and an escaped '#' pass.
harness good "$t/good.sh" "$t/skipok.sh" "$t/hash.sh"
check_eq "a good file, an expected skip, a '#' in a check's text: exit 0" "$rc" 0
check_eq "... counted as 4 passed and 1 skipped" "$last" "4 passed, 0 failed, 1 skipped"
check "... the expected skip is listed with its reason" \
	grep -q "SKIPPED (expected, tests/expected-skips): $t/skipok.sh: listed thing (cannot apply here)" "$d/good/harness.log"

harness short "$t/good.sh" "$t/short.sh"
check_eq "a file that ran 2 of its 3 planned checks fails" "$rc" 1
check_eq "... the missing check counts as failed" "$last" "4 passed, 1 failed, 0 skipped"
check "... and is named" grep -q "FAILED: $t/short.sh: ran 2 of its 3 planned checks" "$d/short/harness.log"

harness notok "$t/notok.sh"
check_eq "a failing check fails, with got and want" "$rc/$last" "1/1 passed, 1 failed, 0 skipped"
check "... its text is shown" grep -q "FAILED: $t/notok.sh: not ok 2 - two: got '1', want '2'" "$d/notok/harness.log"

harness exit3 "$t/exit3.sh"
check "a file that exits 3 after passing checks fails" \
	grep -q "FAILED: $t/exit3.sh: exited 3" "$d/exit3/harness.log"

harness never "$t/good.sh"
printf 'host:%s\t%s\n' "${t//\//_}_never.sh" "$t/never.sh" >>"$d/never/tap/order"
# What tests/run writes when a guest ends badly: the summary shows it.
printf 'the icount guest (lab): vm-run exit 124\nvm-run: where the vCPUs were (8 samples): f+0x1\n' >"$d/never/tap/guest-notes"
MMLOCK_EXPECTED_SKIPS=$d/skips /usr/bin/perl "$TOP/tests/harness" "$d/never" >"$d/never/harness.log" 2>&1
rc=$?
check "a file the run was meant to have and never ran fails (exit $rc)" \
	sh -c "[ $rc = 1 ] && grep -q 'FAILED: $t/never.sh: never ran' '$d/never/harness.log'"
check "... and why the guest ended is in the summary (tests/run's guest-notes)" \
	sh -c "grep -qx 'GUEST: the icount guest (lab): vm-run exit 124' '$d/never/harness.log' &&
		grep -qx 'GUEST: vm-run: where the vCPUs were (8 samples): f+0x1' '$d/never/harness.log'"

harness silent "$t/good.sh" "$t/silent.sh"
check "a file that printed no TAP (exit 2) fails with the reason, and the good file counts (exit $rc)" \
	sh -c "[ $rc = 1 ] && grep -q 'FAILED: $t/silent.sh: printed no TAP (exit 2)' '$d/silent/harness.log' &&
		[ '$last' = '2 passed, 1 failed, 0 skipped' ]"

harness skipx "$t/skipx.sh"
check_eq "a skip that tests/expected-skips does not list fails" "$rc/$last" "1/1 passed, 1 failed, 1 skipped"
check "... and is named as UNEXPECTED SKIP" \
	grep -q "UNEXPECTED SKIP (not in tests/expected-skips): $t/skipx.sh: unlisted thing # SKIP no reason to" "$d/skipx/harness.log"

harness once "$t/once.sh"
check_eq "a failing file ran exactly once" "$(wc -l <"$d/once.count")" 1

# The guest side: the kernel log of each file is checked (stub dmesg), in
# this order: one kernel log for the three.
for f in clean splat after; do
	mkdir -p "$d/$f/tap"
	{
		printf 'lab:%s\t%s\n' "${t//\//_}_$f.sh" "$t/$f.sh"
		printf 'lab:%s+kernel-log\t%s [kernel log]\n' "${t//\//_}_$f.sh" "$t/$f.sh"
	} >"$d/$f/tap/order"
	PATH=$d/bin:$PATH MMLOCK_GUEST=1 MMLOCK_KMSG=$d/kmsg MMLOCK_TEST_OUT=$d/$f \
		"$TOP/tests/run-files" lab "$t/$f.sh" >"$d/$f/run.log" 2>&1
	MMLOCK_EXPECTED_SKIPS=$d/skips /usr/bin/perl "$TOP/tests/harness" "$d/$f" >"$d/$f/harness.log" 2>&1
	eval "rc_$f=$?"
done
check_eq "guest file with a clean kernel log: its kernel-log check passes" "$rc_clean/$(tail -n 1 "$d/clean/harness.log")" \
	"0/2 passed, 0 failed, 0 skipped"
check_eq "a WARNING in the kernel log while a file ran fails that file's kernel-log check" \
	"$rc_splat/$(tail -n 1 "$d/splat/harness.log")" "1/1 passed, 1 failed, 0 skipped"
check "... naming the splat, with its context" \
	sh -c "grep -q 'FAILED: $t/splat.sh \[kernel log\]: not ok 1 - kernel log while $t/splat.sh ran: WARNING: CPU: 0' '$d/splat/harness.log' &&
		grep -q '^#   WARNING: CPU: 0' '$d/splat/tap/lab:${t//\//_}_splat.sh+kernel-log.tap'"
check_eq "a splat from before a file's start marker does not fail that file's kernel-log check" \
	"$rc_after/$(tail -n 1 "$d/after/harness.log")" "0/2 passed, 0 failed, 0 skipped"

# tests/run runs a file on the lab kernel, then on Debian's: the second run
# must not overwrite the first's outputs (test_out).
for k in lab debian-6.12; do
	MMLOCK_KERNEL=$k MMLOCK_TEST_OUT=$d/outs bash "$t/outs.sh" >"$d/outs-$k.log" 2>&1
done
check "a file's outputs on debian-6.12 do not overwrite its lab run's: lab run's '$(cat "$d/outs/made-up/k" 2>/dev/null)', debian-6.12's '$(cat "$d/outs/debian-6.12/made-up/k" 2>/dev/null)'" \
	test "$(cat "$d/outs/made-up/k" 2>/dev/null)/$(cat "$d/outs/debian-6.12/made-up/k" 2>/dev/null)" = lab/debian-6.12
finish
