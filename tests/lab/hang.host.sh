#!/usr/bin/env bash
# A guest that hangs costs one file, not the run (tests/run, scripts/vm-run
# --progress): made-up icount files a (passes), b (blocks for good on a
# FIFO nobody writes: under icount the guest's clock jumps ahead while it
# idles, so no guest-side timeout can see it) and c (passes). With
# MMLOCK_TEST_ICOUNT_FILE_TIMEOUT=30 the guest is killed 30 s into b, its
# vCPUs' places named in the summary; b fails, c runs in a new guest, once.
. "$(dirname "$0")/../lib.sh"
plan 7
d=$(test_out lab-hang)
rm -rf "$d" && mkdir -p "$d/tree/t"
mk() { printf '. %q\n%s\nfinish\n' "$TOP/tests/lib.sh" "$2" >"$d/tree/t/$1.icount.sh"; }
mk a 'plan 1; ok "a ran"'
mk b 'plan 2; ok "b started"; mkfifo /tmp/hang.fifo; read -r x </tmp/hang.fifo; ok "b never gets here"'
mk c 'plan 1; echo c >>"$MMLOCK_TEST_OUT/c.runs"; ok "c ran"'

t0=$(date +%s)
MMLOCK_TEST_TREE=$d/tree MMLOCK_TEST_KERNELS='' MMLOCK_TEST_ICOUNT_FILE_TIMEOUT=30 MMLOCK_TEST_TIMEOUT=600 \
	MMLOCK_TEST_OUT=$d/out "$TOP/tests/run" --guest-only >"$d/run.log" 2>&1
rc=$?
el=$(($(date +%s) - t0))
summary=$(tail -n 1 "$d/run.log")
check_eq "tests/run ended, failing (exit 1), in ${el} s: '$summary'" "$rc" 1
check_eq "a and c passed with their kernel logs; b ran 1 of 2 checks, its kernel-log check never ran" \
	"$summary" "5 passed, 2 failed, 0 skipped"
check "b is named as the file that did not finish" \
	grep -q "^FAILED: $d/tree/t/b.icount.sh: ran 1 of its 2 planned checks" "$d/run.log"
check "the summary says why the guest ended: no progress for 30 s" \
	grep -q "^GUEST: vm-run: timeout: killed the guest after 30s without progress" "$d/run.log"
where=$(grep -m1 '^GUEST: vm-run: where the vCPUs were' "$d/run.log")
check_eq "... and where its one vCPU was: 8 RIPs named from System.map (${where:0:160})" \
	"$(grep -oE '[A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+' <<<"$where" | wc -l)" 8
check_eq "c ran once, in a second guest (console-icount-2.log)" \
	"$(wc -l <"$d/out/c.runs" 2>/dev/null)/$([ -s "$d/out/console-icount-2.log" ] && echo booted)" "1/booted"
left=$(pgrep -f "qemu-system.*$d/out/console-icount" | tr '\n' ' ')
check "no QEMU left behind${left:+ (pids $left)}" [ -z "$left" ]
finish
