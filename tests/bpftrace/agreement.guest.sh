#!/usr/bin/env bash
# The bpftrace scripts agree with the libbpf tools on the same munmaps:
#   munmap_phases.bt vs munmapsnoop -j: the same calls; per call the
#     write-hold and the read-hold agree;
#   mmap_lock_hold.bt vs mmlockstat -j (DESIGN.md section 5): the maxima of
#     write_hold, downgrade_write_phase and downgrade_read_phase agree, the
#     numbers of write holds and of downgrades are equal.
# All four trace the same bt_munmap process at once (PID filter; no reader
# thread), which maps, populates and unmaps 64 MiB twice: in downgrade
# mode, then in exclusive mode when vm.munmap_lock_mode exists (else
# downgrade again), so write_hold's maximum is a whole exclusive munmap.
#
# Tolerance for times: 10% + 4 ms. Why, first 500 us of it: every tool takes its timestamps
# in BPF programs on the same kernel functions (fexit down_write_killable,
# fentry downgrade_write, up_write, up_read). The programs of one function
# share one trampoline and run newest-attached first, so a tool's interval
# also contains, at its end point, the run time of the programs attached
# after it (minus the same at its start point). Measured in the TCG guest
# (64 MiB downgraded munmaps, two scripts attached in both orders): the
# downgrade_write program of munmap_phases.bt added 20-100 us to the write
# phase of the script that ran after it; the heavier one of an earlier
# mmap_lock_hold.bt added 250-1100 us (README.md, "Tracers attached
# together"). 500 us covers the four tools' programs. The other 3.5 ms:
# on a loaded host the vCPU can be descheduled right in that window (a few
# us of guest code between the scripts' and the libbpf tools' timestamps);
# seen: both scripts 16.3 ms, both libbpf tools 19.7 ms for one exclusive
# hold (host load 8 on 2 cores, vs 0.1-0.2 ms apart on a quieter host).
# 10% covers the tens of milliseconds of read phases and exclusive holds.
# mmlockstat's read phase ends elsewhere: see its check below. Counts do
# not depend on timing and must be equal. What the checks still catch: a
# tool that missed or truncated an exclusive hold or a read phase (14-90
# ms here), counted a read phase as write phase (a 0.3-0.6 ms write phase
# would read 15+ ms), or lost/duplicated holds (counts).
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
len=$((64 << 20))

# tol A B: A and B (us) within 10% of the larger + 4 ms (see above).
tol() { echo "($1 - $2)^2 <= (0.1 * ($1 > $2 ? $1 : $2) + 4000)^2"; }

bt_target "$d/target.out" -s 64 -n 2 -R -g "$go" || finish
wl=$BT_WL pid=$BT_TPID

"$MUNMAPSNOOP" -p "$pid" -j >"$d/munmapsnoop.json" 2>"$d/munmapsnoop.err" &
snoop=$!
"$MMLOCKSTAT" -p "$pid" -j >"$d/mmlockstat.json" 2>"$d/mmlockstat.err" &
stat=$!
wait_for "$d/munmapsnoop.err" 'Hit Ctrl-C' 120 "$snoop" || fail "munmapsnoop started: $(tail -n 2 "$d/munmapsnoop.err" | tr '\n' ' ')"
wait_for "$d/mmlockstat.err" 'Hit Ctrl-C' 120 "$stat" || fail "mmlockstat started: $(tail -n 2 "$d/mmlockstat.err" | tr '\n' ' ')"
bt_start munmap_phases "$d/munmap_phases.out" "$pid" "${off:-0}" || { fail "munmap_phases.bt attaches"; kill "$wl" "$snoop" "$stat"; finish; }
bt1=$BT_PID
bt_start mmap_lock_hold "$d/mmap_lock_hold.out" "$pid" "${off:-0}" || { fail "mmap_lock_hold.bt attaches"; kill "$wl" "$snoop" "$stat"; BT_PID=$bt1; bt_stop; finish; }
bt2=$BT_PID

mode1=downgrade
have_modes && mode1=exclusive
set_mode downgrade
touch "$go"
wait_for "$d/target.out" 'ready pid=.* iter=1' 600 "$wl"
set_mode "$mode1"
touch "$go"
wait "$wl" || fail "bt_munmap exited $?"
set_mode downgrade
# SIGINT and wait for each (mmlockstat may have left when the PID exited).
names=([$bt1]=munmap_phases.bt [$bt2]=mmap_lock_hold.bt [$snoop]=munmapsnoop [$stat]=mmlockstat)
for p in "$bt1" "$bt2" "$snoop" "$stat"; do
	BT_PID=$p
	bt_stop
	bt_stopped "agreement: ${names[$p]}" || finish
done

# munmap_phases vs munmapsnoop, per 64 MiB call, in order: "W R" in us.
grep -E "bt_munmap-$pid +\[.* len=$len " "$d/munmap_phases.out" |
	sed -n 's/.* write=\([0-9.]*\)us\/[0-9]* read=\([0-9.]*\)us .*/\1 \2/p' >"$d/bt.calls"
/usr/bin/python3 - "$d/munmapsnoop.json" "$len" >"$d/snoop.calls" 2>"$d/snoop.calls.err" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    e = json.loads(line)
    if e.get("op") == "munmap" and e.get("len") == int(sys.argv[2]):
        print(e["write_hold_ns"] / 1e3, e["read_hold_ns"] / 1e3)
PY
nb=$(wc -l <"$d/bt.calls") ns=$(wc -l <"$d/snoop.calls")
check "agreement: both see the 2 munmaps of 64 MiB (munmap_phases $nb, munmapsnoop $ns)" [ "$nb.$ns" = 2.2 ]
paste -d' ' "$d/bt.calls" "$d/snoop.calls" >"$d/calls.txt"
i=0
while read -r bw br sw sr; do
	m=downgrade
	[ $i = 1 ] && m=$mode1
	fcheck "agreement $m: write-hold munmap_phases ${bw} us ~ munmapsnoop ${sw} us (10% + 4 ms)" "$(tol "$bw" "$sw")"
	fcheck "agreement $m: read-hold munmap_phases ${br} us ~ munmapsnoop ${sr} us (10% + 4 ms)" "$(tol "$br" "$sr")"
	i=$((i + 1))
done <"$d/calls.txt"
[ "$nb.$ns" = 2.2 ] && [ "$i" != 2 ] && fail "agreement: compared $i of the 2 calls"

# mmap_lock_hold vs mmlockstat (the last JSON object covers the whole run).
/usr/bin/python3 - "$d/mmlockstat.json" >"$d/mmlockstat.vals" 2>"$d/mmlockstat.vals.err" <<'PY'
import json, sys
objs = []
for l in open(sys.argv[1]):
    if l.strip().startswith("{"):
        objs.append(json.loads(l))
h = objs[-1]["histograms"]
for k in ("write_hold", "downgrade_write_phase", "downgrade_read_phase"):
    print(k, h[k]["count"], h[k]["max"] / 1e3)
PY
[ -s "$d/mmlockstat.vals" ] || fail "agreement: mmlockstat -j gave write_hold, downgrade_write_phase, downgrade_read_phase: $(tail -n 1 "$d/mmlockstat.vals.err")"
echo "# mmlockstat: $(tr '\n' ' ' <"$d/mmlockstat.vals")" >&2
bt=$d/mmap_lock_hold.out
for k in write_hold:write downgrade_write_phase:downgrade_write_phase downgrade_read_phase:downgrade_read_phase; do
	sk=${k%%:*} bk=${k#*:}
	read -r _ sn smax <<<"$(grep "^$sk " "$d/mmlockstat.vals")"
	bmax=$(map_val "$bt" hold_max_ns "$bk")
	bn=$(stat_count "$bt" hold_ns "$bk")
	bmax=$(awk -v v="$bmax" 'BEGIN { if (v != "") printf "%.3f", v / 1000 }')
	echo "# $sk: mmap_lock_hold n=${bn:-none} max=${bmax:-none}us, mmlockstat n=${sn:-none} max=${smax:-none}us" >&2
	if [ "$sk" = downgrade_read_phase ]; then
		# mmlockstat's default probes end a downgraded read phase at the
		# return of do_mas_munmap() (a kretprobe: it stays off the
		# up_read() path), the scripts and munmapsnoop at the up_read()
		# in __vm_munmap() right after it. In between run the kretprobe
		# return path and mmlockstat's own handler (two histogram updates
		# and a ring-buffer event), after mmlockstat's timestamp and
		# before everyone else's: 0.6-4.8 ms under TCG (five runs). So
		# mmlockstat must not be longer (+4 ms as above) and may be up to
		# 25% + 4 ms shorter; a tool that ended the phase with the write
		# phase or at unmap_region()'s start would be far below.
		fcheck "agreement: $sk max mmlockstat ${smax:-none} us <= mmap_lock_hold ${bmax:-none} us + 4 ms and >= 75% of it - 4 ms (it ends at do_mas_munmap's return)" \
			"${smax:-} <= ${bmax:-} + 4000 && ${smax:-} >= 0.75 * ${bmax:-} - 4000"
		rmax=$(awk '{ if ($2 > m) m = $2 } END { print m + 0 }' "$d/bt.calls")
		fcheck "agreement: $sk max mmap_lock_hold ${bmax:-none} us ~ munmap_phases ${rmax} us (10% + 4 ms, same probes)" \
			"$(tol "${bmax:-}" "$rmax")"
		continue
	fi
	fcheck "agreement: $sk max mmap_lock_hold ${bmax:-none} us ~ mmlockstat ${smax:-none} us (10% + 4 ms)" \
		"$(tol "${bmax:-}" "${smax:-}")"
	check "agreement: $sk count mmap_lock_hold ${bn:-none} = mmlockstat ${sn:-none}" [ "${bn:-x}" = "${sn:-y}" ]
done
finish
