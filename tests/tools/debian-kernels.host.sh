#!/usr/bin/env bash
# The tools on Debian's own kernels (vm-run --kernel debian-6.1|debian-6.12,
# unpacked into the cache by scripts/debian-kernel; tests/lab/debian-kernel
# .host.sh checks the boot itself). In each guest
# tests/tools/debian_tools_run.sh runs munmapsnoop over a 64 MiB munmap
# and mmlockstat --full over an exec chain; the checks here read what they
# wrote:
#  - munmapsnoop times the zap on each kernel, never a silent zero: 6.1
#    munmaps through unmap_region(); 6.12 through vms_clear_ptes(), which
#    kprobes cannot attach to there, so the tool times unmap_vmas() +
#    free_pgtables() + tlb_finish_mmu() and says so in one line;
#  - a stock kernel always downgrades munmap: the zap lies in the read phase;
#  - mmlockstat --full takes the rwsem read functions (fentry) on both (their
#    mmap_lock tracepoints build the memcg path string) and ends the read
#    holds exec and exit take on the mm they leave (200 execs + 1 exit).
. "$(dirname "$0")/../lib.sh"
series=(6.1 6.12)
N_PER=6
plan $((N_PER * ${#series[@]}))
d=$(test_out tools-debian)
SCHECK="$PY $TOP/tests/tools/munmapsnoop_check.py"
MCHECK="$PY $TOP/tests/tools/mmlockstat_check.py"
LEN=$((64 << 20))
# int X: X if it is a non-negative integer, else -1 (a checker's error text)
int() { if [[ ${1:-} =~ ^[0-9]+$ ]]; then echo "$1"; else echo -1; fi; }

for s in "${series[@]}"; do
	rm -rf "$d/vm-$s"
	o=$d/vm-$s/tools	# under vm-run's --out: shared with the guest
	if ! kd=$("$TOP/scripts/debian-kernel" "$s" 2>"$d/fetch-$s.err"); then
		fail_n $N_PER "debian-$s: scripts/debian-kernel $s: $(tail -n 1 "$d/fetch-$s.err")"
		continue
	fi
	"$TOP/scripts/vm-run" --kernel "debian-$s" --timeout 600 --out "$d/vm-$s" -- \
		"$TOP/tests/tools/debian_tools_run.sh" "$o" >"$d/$s.out" 2>&1
	rc=$?
	rel=$(cat "$kd/kernel.release" 2>/dev/null)
	if ! v=$($SCHECK get "$o/snoop.json" munmap $LEN total_ns read_hold_ns unmap_region_ns downgraded 2>&1); then
		echo "# debian-$s: munmapsnoop_check.py: $v"
		v=
	fi
	read -r total rh ur dg <<<"$v"
	total=$(int "$total") rh=$(int "$rh") ur=$(int "$ur")
	check "debian-$s: munmapsnoop ran on $(cat "$o/uname" 2>/dev/null) (want $rel) and saw the 64 MiB munmap (vm-run $rc, workload $(cat "$o/map.rc" 2>/dev/null), tool $(cat "$o/snoop.rc" 2>/dev/null); total_ns=${total:-none})" \
		[ "$(cat "$o/uname" 2>/dev/null)" = "$rel" -a "$(cat "$o/map.rc" 2>/dev/null)" = 0 -a "$(cat "$o/snoop.rc" 2>/dev/null)" = 0 -a "$total" -gt 0 ]
	check "debian-$s: the zap is timed, inside the downgraded read phase (unmap_region_ns ${ur:-none} in (0, read_hold_ns ${rh:-none}], downgraded ${dg:-none})" \
		[ "$ur" -gt 0 -a "$ur" -le "$rh" -a "${dg:-}" = true ]
	if [ "$s" = 6.12 ]; then
		check "debian-$s: munmapsnoop says what it times instead of vms_clear_ptes(): $(grep -m1 'unmap_region_ns times' "$o/snoop.err")" \
			grep -q 'vms_clear_ptes().*unmap_region_ns times unmap_vmas() + free_pgtables() + tlb_finish_mmu()' "$o/snoop.err"
	else
		check "debian-$s: munmapsnoop probes unmap_region() itself (no note that it times something else)" \
			[ -s "$o/snoop.err" ] && ! grep -q 'unmap_region_ns times' "$o/snoop.err"
	fi
	if ! v=$($MCHECK get "$o/mmls.json" \
		'" ".join(str(x) for x in (o.get("read_probes"), o.get("tracepoint_memcg"), o.get("read_holds_left_mm"), o.get("read_holds_left_mm_untimed"), o.get("read_holds_open"), o["histograms"]["read_hold"]["count"]))' 2>&1); then
		echo "# debian-$s: mmlockstat_check.py: $v"
		v=
	fi
	read -r probes memcg left unt open holds <<<"$v"
	left=$(int "$left") unt=$(int "$unt") open=$(int "$open") holds=$(int "$holds")
	check "debian-$s: mmlockstat --full takes the rwsem read functions (read_probes ${probes:-none}, tracepoints carry the memcg ${memcg:-none}; ${holds:-0} read holds; exec chain exit $(cat "$o/exec.rc" 2>/dev/null), tool $(cat "$o/mmls.rc" 2>/dev/null))" \
		[ "${probes:-}" = fentry -a "${memcg:-}" = path -a "$holds" -ge 200 -a "$(cat "$o/exec.rc" 2>/dev/null)" = 0 -a "$(cat "$o/mmls.rc" 2>/dev/null)" = 0 ]
	check_eq "debian-$s: read holds of an mm the task left (200 execs, 1 exit), timed + ended at exec/exit (${left:-none} + ${unt:-none})" \
		"$((left + unt))" 201
	check_eq "debian-$s: read holds left open at the end" "$open" 0
done
finish
