#!/usr/bin/env bash
# The bpftrace scripts agree with the libbpf tools on the same munmaps:
#   munmap_phases.bt vs munmapsnoop: same calls; per call write-hold and
#     read-hold within 10% + 200 us of each other;
#   mmap_lock_hold.bt vs mmlockstat: write-hold and downgrade read-phase
#     maxima within 10% + 200 us; downgrade counts equal.
# All four trace the same bt_munmap process at once (PID filter), which
# unmaps 64 MiB twice: in downgrade mode, then in exclusive mode when
# vm.munmap_lock_mode exists (else downgrade again). The tolerance covers
# the tracers' own trampolines inside each other's intervals under TCG.
. "$(dirname "$0")/bt_lib.sh"
d=$(test_out bpftrace-agreement)
MMLOCKSTAT=$TOP/bpf/mmlockstat
MUNMAPSNOOP=$TOP/bpf/munmapsnoop
if [ ! -x "$MMLOCKSTAT" ] || [ ! -x "$MUNMAPSNOOP" ]; then
	skip "bpftrace scripts agree with mmlockstat/munmapsnoop" "bpf tools not built (make tools)"
	finish
fi
go=/tmp/bt-agree-go
rm -f "$go"
off=$(bt_mmoff)

"$BT_W" -s 64 -n 2 -g "$go" >"$d/target.out" 2>&1 &
wl=$!
bt_wait "$d/target.out" 'ready pid=.* iter=0' 30 "$wl" || { fail "bt_munmap -g did not get ready"; finish; }
pid=$(sed -n 's/^ready pid=\([0-9]*\).*/\1/p' "$d/target.out" | head -n1)

"$MUNMAPSNOOP" -p "$pid" -j >"$d/munmapsnoop.json" 2>"$d/munmapsnoop.err" &
snoop=$!
"$MMLOCKSTAT" -p "$pid" -j >"$d/mmlockstat.json" 2>"$d/mmlockstat.err" &
stat=$!
bt_start munmap_phases "$d/munmap_phases.out" "$pid" "${off:-0}" || { fail "munmap_phases.bt attaches"; kill "$wl" "$snoop" "$stat"; finish; }
bt1=$BT_PID
bt_start mmap_lock_hold "$d/mmap_lock_hold.out" "$pid" "${off:-0}" || { fail "mmap_lock_hold.bt attaches"; kill "$wl" "$snoop" "$stat"; BT_PID=$bt1; finish; }
bt2=$BT_PID
sleep 5	# the libbpf tools attach in well under the bpftrace start-up time

mode1=downgrade
have_modes && mode1=exclusive
set_mode downgrade
touch "$go"
bt_wait "$d/target.out" 'ready pid=.* iter=1' 600 "$wl"
set_mode "$mode1"
touch "$go"
wait "$wl" || fail "bt_munmap exited $?"
set_mode downgrade
sleep 2
BT_PID=$bt1 bt_stop
BT_PID=$bt2 bt_stop
for p in $snoop $stat; do kill -INT "$p" 2>/dev/null; done
for p in $snoop $stat; do wait "$p" 2>/dev/null; done

# munmap_phases vs munmapsnoop, per 64 MiB call, in order.
grep -E "bt_munmap-[0-9]+ +\[.* len=67108864 " "$d/munmap_phases.out" |
	awk '{ for (i = 1; i <= NF; i++) { if ($i ~ /^write=/) { split(substr($i, 7), a, "us/"); w = a[1] } if ($i ~ /^read=/) r = substr($i, 6) + 0 } print w, r }' >"$d/bt.calls"
/usr/bin/python3 - "$d/munmapsnoop.json" >"$d/snoop.calls" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    e = json.loads(line)
    if e.get("op") == "munmap" and e.get("len") == 67108864:
        print(e["write_hold_ns"] / 1e3, e["read_hold_ns"] / 1e3)
PY
nb=$(wc -l <"$d/bt.calls") ns=$(wc -l <"$d/snoop.calls")
check "agreement: both see the 2 munmaps of 64 MiB (munmap_phases $nb, munmapsnoop $ns)" [ "$nb.$ns" = 2.2 ]
if [ "$nb" = 2 ] && [ "$ns" = 2 ]; then
	i=0
	while read -r bw br sw sr; do
		m=downgrade
		[ $i = 1 ] && m=$mode1
		fcheck "agreement $m: write-hold munmap_phases ${bw} us ~ munmapsnoop ${sw} us (10% + 200 us)" \
			"($bw - $sw)^2 <= (0.1 * ($bw > $sw ? $bw : $sw) + 200)^2"
		fcheck "agreement $m: read-hold munmap_phases ${br} us ~ munmapsnoop ${sr} us (10% + 200 us)" \
			"($br - $sr)^2 <= (0.1 * ($br > $sr ? $br : $sr) + 200)^2"
		i=$((i + 1))
	done < <(paste -d' ' "$d/bt.calls" "$d/snoop.calls")
fi

# mmap_lock_hold vs mmlockstat (the last JSON object: the whole run).
read -r sw_n sw_max sd_n sd_max < <(/usr/bin/python3 - "$d/mmlockstat.json" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
h = objs[-1]["histograms"] if objs else {}
g = lambda k, f: h.get(k, {}).get(f, 0)
print(g("write_hold", "count"), g("write_hold", "max") / 1e3,
      g("downgrade_read_phase", "count"), g("downgrade_read_phase", "max") / 1e3)
PY
)
bw_max=$(( $(map_val "$d/mmap_lock_hold.out" hold_max_ns write) / 1000 ))
bd_max=$(( $(map_val "$d/mmap_lock_hold.out" hold_max_ns downgrade_read_phase) / 1000 ))
bd_n=$(sed -n 's/^@hold_ns\[downgrade_read_phase\]: count \([0-9]*\),.*/\1/p' "$d/mmap_lock_hold.out")
bw_n=$(sed -n 's/^@hold_ns\[write\]: count \([0-9]*\),.*/\1/p' "$d/mmap_lock_hold.out")
echo "# mmlockstat write n=$sw_n max=${sw_max}us dgread n=$sd_n max=${sd_max}us; mmap_lock_hold write n=$bw_n max=${bw_max}us dgread n=$bd_n max=${bd_max}us" >&2
fcheck "agreement: write-hold max mmap_lock_hold ${bw_max} us ~ mmlockstat ${sw_max} us (10% + 200 us)" \
	"($bw_max - $sw_max)^2 <= (0.1 * ($bw_max > $sw_max ? $bw_max : $sw_max) + 200)^2"
fcheck "agreement: downgrade read-phase max mmap_lock_hold ${bd_max} us ~ mmlockstat ${sd_max} us (10% + 200 us)" \
	"($bd_max - $sd_max)^2 <= (0.1 * ($bd_max > $sd_max ? $bd_max : $sd_max) + 200)^2"
check "agreement: downgrade count mmap_lock_hold ${bd_n:-none} = mmlockstat ${sd_n:-none}" [ "${bd_n:-x}" = "${sd_n:-y}" ]
check "agreement: write-hold count mmap_lock_hold ${bw_n:-none} = mmlockstat ${sw_n:-none}" [ "${bw_n:-x}" = "${sw_n:-y}" ]
finish
