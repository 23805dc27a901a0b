#!/usr/bin/env bash
# munmapsnoop: the phases of one populated munmap (4 KiB pages) in each
# vm.munmap_lock_mode, brk and mremap shrinks, the waiters it blocked, and
# the JSON contract (DESIGN.md section 5). Figures go to stdout as "# ..."
# lines (the three-mode table of the report).
#
# Tolerances, and why:
#  - downgrade: write hold < 5 % of the call (it only finds/splits/detaches
#    one VMA: microseconds, vs. ~0.1 s of zapping); read hold minus the time
#    in unmap_region() <= 10 % + 1 ms (the rest of the read phase is
#    remove_mt() and up_read() for one VMA);
#  - exclusive: write hold >= 95 % of the call, no read phase;
#  - the tool's total <= the workload's own syscall time (measured around
#    it) and >= 90 % of it (syscall entry/exit and the probes are outside);
#  - a faulting thread blocked by an exclusive munmap waited >= 50 % of it
#    (it faults continuously, so it queues within the first page's worth),
#    and its longest wait seen by the tool agrees with the longest page
#    touch it timed itself within 20 % or 5 ms (the touch adds the fault
#    itself and the wake-up to the lock wait).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/munmapsnoop_lib.sh"
snoop_setup munmapsnoop-modes
MIB=${MUNMAPSNOOP_TEST_MIB:-256}
LEN=$((MIB << 20))

# check_le WHAT A B: A <= B (integers)
check_le() { if [ "$2" -le "$3" ] 2>/dev/null; then ok "$1 ($2 <= $3)"; else fail "$1: $2 > $3"; fi; }

# ---- downgrade (the 6.1 default) ----
set_mode downgrade
traced_call dg -- -s "$MIB"
read -r total wh rh ur dg mode sect drops <<<"$(jfield "$d/dg.json" munmap "$LEN" \
	total_ns write_hold_ns read_hold_ns unmap_region_ns downgraded mode sections lock_drops)"
figures "$d/dg.json" downgrade munmap "$LEN"
if [ -z "${total:-}" ]; then
	fail "downgrade: one munmap event of $MIB MiB (rc $SNOOP_RC): $(tail -n 3 "$d/dg.err" | tr '\n' ' ')"
else
	ok "downgrade: one munmap event of $MIB MiB"
	check "downgrade: downgraded=true mode=downgrade (got $dg $mode)" [ "$dg $mode" = "true downgrade" ]
	check_le "downgrade: write hold x 20 <= total (write hold is microseconds)" $((wh * 20)) "$total"
	check_le "downgrade: unmap_region <= read hold" "$ur" "$rh"
	check_le "downgrade: read hold - unmap_region <= 10 % + 1 ms" $((rh - ur)) $((rh / 10 + 1000000))
	check_le "downgrade: total <= the workload's own syscall time" "$total" "$MAP_ELAPSED"
	check_le "downgrade: 90 % of the workload's syscall time <= total" $((MAP_ELAPSED * 9 / 10)) "$total"
	check "downgrade: one section, no lock drop (got $sect, $drops)" [ "$sect $drops" = "1 0" ]
fi

# ---- downgrade with faulting threads: readers are not blocked by the zap ----
traced_call dgf -- -s "$MIB" -f 2
read -r total dg waiters maxw <<<"$(jfield "$d/dgf.json" munmap "$LEN" total_ns downgraded waiters max_wait_ns)"
figures "$d/dgf.json" downgrade+faulters munmap "$LEN"
if [ -n "${total:-}" ]; then
	# not vacuous: the faulting threads faulted during the call
	check_le "downgrade+faulters: the faulting threads faulted during the munmap (faults)" 1 "${MAP_FAULTS_DURING:-0}"
	check_le "downgrade+faulters: the longest reader wait x 2 <= the call" $((maxw * 2)) "$total"
else
	fail "downgrade+faulters: one munmap event"
fi

# ---- exclusive ----
if ! have_modes; then
	skip "exclusive: write hold ~ total, no read phase" "no $SYSCTL_MODE (unpatched kernel)"
	skip "section: sections and lock drops counted" "no $SYSCTL_MODE (unpatched kernel)"
else
	set_mode exclusive
	traced_call ex -- -s "$MIB"
	read -r total wh rh ur dg mode sect drops <<<"$(jfield "$d/ex.json" munmap "$LEN" \
		total_ns write_hold_ns read_hold_ns unmap_region_ns downgraded mode sections lock_drops)"
	figures "$d/ex.json" exclusive munmap "$LEN"
	if [ -z "${total:-}" ]; then
		fail "exclusive: one munmap event of $MIB MiB (rc $SNOOP_RC)"
	else
		check "exclusive: downgraded=false mode=exclusive (got $dg $mode)" [ "$dg $mode" = "false exclusive" ]
		check "exclusive: no read phase (read_hold_ns=$rh)" [ "$rh" = 0 ]
		check_le "exclusive: 95 % of total <= write hold" $((total * 95 / 100)) "$wh"
		check_le "exclusive: unmap_region <= write hold" "$ur" "$wh"
		check_le "exclusive: half the write hold <= unmap_region (the zap dominates)" $((wh / 2)) "$ur"
		check "exclusive: one section, no lock drop (got $sect, $drops)" [ "$sect $drops" = "1 0" ]
	fi

	traced_call exf -- -s "$MIB" -f 2
	read -r total waiters wait maxw rw <<<"$(jfield "$d/exf.json" munmap "$LEN" \
		total_ns waiters wait_ns max_wait_ns read_waiters)"
	figures "$d/exf.json" exclusive+faulters munmap "$LEN"
	echo "# exclusive+faulters: workload fault_max_us=$((MAP_FAULT_MAX / 1000))"
	if [ -z "${total:-}" ]; then
		fail "exclusive+faulters: one munmap event"
	else
		check "exclusive+faulters: blocked readers counted (waiters=$waiters read_waiters=$rw wait_ns=$wait)" \
			[ "$rw" -ge 1 -a "$wait" -gt 0 ]
		check_le "exclusive+faulters: half the call <= the longest wait" $((total / 2)) "$maxw"
		check_le "exclusive+faulters: the longest wait <= the call" "$maxw" "$total"
		diff=$((MAP_FAULT_MAX - maxw)); diff=${diff#-}
		tol=$((MAP_FAULT_MAX / 5)); [ "$tol" -lt 5000000 ] && tol=5000000
		check_le "exclusive+faulters: longest wait vs the workload's longest fault, |difference|" "$diff" "$tol"
	fi

	# ---- section ----
	set_mode section
	step=$((32 << 20))
	[ -w "$SYSCTL_BYTES" ] && echo "$step" >"$SYSCTL_BYTES"
	step=$(cat "$SYSCTL_BYTES" 2>/dev/null || echo $((1 << 30)))
	nexp=$((LEN / step))
	dbg=/sys/kernel/debug/munmap_lock
	c0=$(awk '$1 == "munmap_section_drop" {print $2}' "$dbg" 2>/dev/null)
	traced_call sec -- -s "$MIB" -f 2
	c1=$(awk '$1 == "munmap_section_drop" {print $2}' "$dbg" 2>/dev/null)
	read -r total mode sect drops acqs wh rh <<<"$(jfield "$d/sec.json" munmap "$LEN" \
		total_ns mode sections lock_drops write_acquisitions write_hold_ns read_hold_ns)"
	figures "$d/sec.json" section+faulters munmap "$LEN"
	if [ -z "${total:-}" ]; then
		fail "section: one munmap event (rc $SNOOP_RC)"
	else
		check "section: mode=section (got $mode)" [ "$mode" = section ]
		check_le "section: at least size/section_bytes sections" "$nexp" "$sect"
		check "section+faulters: lock drops counted (got $drops, write acquisitions $acqs)" \
			[ "$drops" -ge 1 -a "$acqs" = $((drops + 1)) ]
		if [ -n "$c0" ] && [ -n "$c1" ]; then
			check "section: lock drops = the kernel's munmap_section_drop delta ($drops vs $((c1 - c0)))" \
				[ "$drops" = $((c1 - c0)) ]
		else
			skip "section: lock drops = the kernel's counter" "no $dbg"
		fi
	fi
	traced_call sec0 -- -s "$MIB"
	read -r mode sect drops <<<"$(jfield "$d/sec0.json" munmap "$LEN" mode sections lock_drops)"
	figures "$d/sec0.json" section munmap "$LEN"
	check "section, uncontended: mode=section, >= $nexp sections, no drop (got ${mode:-none} ${sect:-} ${drops:-})" \
		[ "${mode:-}" = section -a "${sect:-0}" -ge "$nexp" -a "${drops:-}" = 0 ]
	set_mode downgrade
fi

# ---- brk and mremap shrinks (downgrade mode) ----
traced_call brk -- -s 64 -o brk
read -r dg ur sect <<<"$(jfield "$d/brk.json" brk "$MAP_LEN" downgraded unmap_region_ns sections)"
figures "$d/brk.json" brk-shrink brk "$MAP_LEN"
check "brk shrink: one brk event of 64 MiB, downgraded, one unmap_region (got ${dg:-none} ${sect:-})" \
	[ "${dg:-}" = true -a "${sect:-0}" = 1 -a "${ur:-0}" -gt 0 ]
traced_call mremap -- -s 64 -o mremap
read -r dg ur sect <<<"$(jfield "$d/mremap.json" mremap "$MAP_LEN" downgraded unmap_region_ns sections)"
figures "$d/mremap.json" mremap-shrink mremap "$MAP_LEN"
check "mremap shrink: one mremap event of 64 MiB - 4 KiB, downgraded, one unmap_region (got ${dg:-none} ${sect:-})" \
	[ "${dg:-}" = true -a "${sect:-0}" = 1 -a "${ur:-0}" -gt 0 ]
if have_modes; then
	set_mode exclusive
	traced_call brkx -- -s 64 -o brk
	read -r dg mode <<<"$(jfield "$d/brkx.json" brk "$MAP_LEN" downgraded mode)"
	check "brk shrink in exclusive mode: not downgraded (got ${dg:-none} ${mode:-})" \
		[ "${dg:-}" = false -a "${mode:-}" = exclusive ]
	set_mode downgrade
fi

# ---- the JSON contract ----
"$PY" - "$d"/*.json >"$d/schema.out" 2>&1 <<'EOF'
import json, re, sys
ints = ["schema", "ts_ns", "pid", "tid", "len", "total_ns", "write_hold_ns", "read_hold_ns",
        "unmap_region_ns", "sections", "lock_drops", "waiters", "wait_ns"]
n = 0
for f in sys.argv[1:]:
    for i, line in enumerate(open(f), 1):
        o = json.loads(line)
        where = "%s:%d" % (f, i)
        for k in ints:
            assert isinstance(o[k], int) and not isinstance(o[k], bool) and o[k] >= 0, (where, k)
        assert o["schema"] == 1 and o["tool"] == "munmapsnoop", where
        assert isinstance(o["comm"], str), where
        assert o["op"] in ("munmap", "brk", "mremap"), where
        assert re.fullmatch(r"0x[0-9a-f]+", o["start"]), where
        assert isinstance(o["downgraded"], bool), where
        assert o["mode"] in ("exclusive", "downgrade", "section", "unknown"), where
        assert o["write_hold_ns"] + o["read_hold_ns"] <= o["total_ns"], (where, "holds > total")
        n += 1
assert n > 0, "no JSON lines"
print(n)
EOF
nlines=$(tail -n 1 "$d/schema.out")
check "every JSON line parses and has the schema-1 keys and types ($nlines)" [ "$nlines" -gt 0 ]
finish
