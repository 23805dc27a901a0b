#!/usr/bin/env bash
# bt_check.py phases --sched on the lines of the CI run of 3404711
# (2026-12-07, lab kernel), whose downgrade call failed "read phase -
# unmap_region under 100 us" with 426223 ns: the munmap thread was off the
# CPU between the zap's end and the read phase's end (remove_vma()'s
# might_sleep() is a preemption point under PREEMPT_VOLUNTARY; a sibling
# thread ran there). That run kept no sched_switch trace; the traces below
# are made up around its figures. Off-CPU time inside the read phase and
# outside the zap is charged to that check; inside the zap (where both
# timings count it) or before the read phase (in neither) it is not. The
# last check is the call of a later CI run, with its own trace.
. "$(dirname "$0")/../lib.sh"
plan 5
d=$(test_out bpftrace-phases-sched)
mkdir -p "$d"
BT_CHECK="$PY $TOP/tests/bpftrace/bt_check.py"

cat >"$d/phases.txt" <<'T'
Tracing __vm_munmap() phases of PID 867 (mmap_lock at mm+96)... Hit Ctrl-C to end.
      bt_munmap-867     [000]    211.081267: |  __vm_munmap() {
      bt_munmap-867     [000]    211.145153:    63875.725 us |    unmap_region(); /* x1 */
      bt_munmap-867     [000]    211.145579:    64311.984 us |  } /* len=268435456 write=5.176us/1 read=64301.948us mode=downgrade waiters=2 ret=0 */
T
cat >"$d/workload.out" <<'T'
ready pid=867 iter=0
bt_munmap pid=867 iter=0 len=268435456 munmap_us=74786 reader_reads=636 reader_max_us=64712 writer_ops=1024 populate_ns_per_page=13435 addr=0x7f73b3bd3000
T
# switch WHEN_US PREV NEXT: one sched_switch line at 211 s + WHEN_US
switch() {
	printf '       bt_munmap-%d     [000] d..2.   211.%06d: sched_switch: prev_comm=bt_munmap prev_pid=%d prev_prio=120 prev_state=R+ ==> next_comm=bt_munmap next_pid=%d next_prio=120\n' \
		"$2" "$1" "$2" "$3"
}
# off FROM TO: PID 867 off the CPU from FROM to TO (us after 211 s)
off() { switch "$1" 867 869; switch "$2" 869 867; }
{ echo "# tracer: nop"; off 145155 145577; } >"$d/after.trace"
{ echo "# tracer: nop"; off 100000 100422; } >"$d/inside.trace"

# check6 [TRACE]: check 6 of the downgrade call (read - zap)
check6() {
	local s=()
	[ -z "${1:-}" ] || s=(--sched "$1")
	$BT_CHECK phases "${s[@]}" "$d/phases.txt" "$d/workload.out" 867 268435456 16777216 downgrade |
		grep -E '^(not )?ok 6 '
}
got=$(check6)
check "without a trace, the CI run's call fails as it did ($got)" \
	grep -q '^not ok 6 - downgrade: read phase - unmap_region under 100 us, less 0 ns off the CPU outside the zap (not traced) (426223 ns' <<<"$got"
got=$(check6 "$d/after.trace")
check "422 us off the CPU after the zap: charged, 4223 ns left ($got)" \
	grep -q '^ok 6 - downgrade: read phase - unmap_region under 100 us, less 422000 ns off the CPU outside the zap (4223 ns in' <<<"$got"
got=$(check6 "$d/inside.trace")
check "the same 422 us inside the zap: not charged, still fails ($got)" \
	grep -q '^not ok 6 - .*less 0 ns off the CPU outside the zap (426223 ns' <<<"$got"
{ echo "# tracer: nop"; off 81270 81271; off 145155 145577; off 145578 145590; } >"$d/edges.trace"
got=$(check6 "$d/edges.trace")
check "off-CPU spans on both edges and one past the call's end: only the parts inside the read phase, outside the zap (the first, 7 us before the read phase began, not) ($got)" \
	grep -q '^ok 6 - .*less 423000 ns off the CPU' <<<"$got"
# The CI run of b413293 (2026-12-07, lab kernel): the call blocked in
# down_write for 5 us (a sibling had the lock) before its read phase. That
# wait is in neither the read phase nor the zap; charging it gave -765 ns.
cat >"$d/ci8.txt" <<'T'
      bt_munmap-869     [000]    217.378633: |  __vm_munmap() {
      bt_munmap-869     [000]    217.442593:    63929.906 us |    unmap_region(); /* x1 */
      bt_munmap-869     [000]    217.442598:    63964.762 us |  } /* len=268435456 write=5.176us/1 read=63934.141us mode=downgrade waiters=2 ret=0 */
T
echo "bt_munmap pid=869 iter=0 len=268435456 munmap_us=73400 reader_reads=547 reader_max_us=58753 writer_ops=1026 populate_ns_per_page=13484 addr=0x7f28df0e3000" >"$d/ci8.out"
cat >"$d/ci8.trace" <<'T'
       bt_munmap-870     [000] d....   217.378631: sched_switch: prev_comm=bt_munmap prev_pid=870 prev_prio=120 prev_state=R+ ==> next_comm=bt_munmap next_pid=869 next_prio=120
       bt_munmap-869     [000] d....   217.378649: sched_switch: prev_comm=bt_munmap prev_pid=869 prev_prio=120 prev_state=D ==> next_comm=bt_munmap next_pid=870 next_prio=120
       bt_munmap-870     [000] d....   217.378654: sched_switch: prev_comm=bt_munmap prev_pid=870 prev_prio=120 prev_state=R+ ==> next_comm=bt_munmap next_pid=869 next_prio=120
       bt_munmap-869     [000] d....   217.442616: sched_switch: prev_comm=bt_munmap prev_pid=869 prev_prio=120 prev_state=R ==> next_comm=bt_munmap next_pid=871 next_prio=120
T
got=$($BT_CHECK phases --sched "$d/ci8.trace" "$d/ci8.txt" "$d/ci8.out" 869 268435456 16777216 downgrade |
	grep -E '^(not )?ok 6 ')
check "the CI run's call: 5 us blocked for the lock before its read phase, not charged ($got)" \
	grep -q '^ok 6 - .*less 0 ns off the CPU outside the zap (4235 ns in' <<<"$got"
finish
