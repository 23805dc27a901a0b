#!/usr/bin/env bash
# The report pipeline end to end in the guest, on a small size: the
# experiment runs every mode under mmlockstat and munmapsnoop, the report is
# rendered and consistent with its raw JSON, Chromium renders it, and the
# numbers tell the story (exclusive blocks the /proc reader for the whole
# munmap; downgrade drops to the read lock).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-report.sh"
od=$(test_out report-guest)
rm -rf "$od/report"
mkdir -p "$od/report"

SIZE_MB=${REPORT_TEST_SIZE_MB:-128} REPS=1 MODES="exclusive downgrade section" \
	"$TOP/scripts/experiment" "$od/report/raw" >"$od/experiment.log" 2>&1
rc=$?
if [ "$rc" = 0 ]; then
	ok "experiment (128 MiB, 1 rep, all modes, with tools) exits 0"
else
	fail "experiment exits 0: exit $rc: $(grep -m3 'FAILED\|experiment: [a-z]' "$od/experiment.log" | tail -1 | cut -c1-200)"
fi
/usr/bin/python3 "$TOP/scripts/render_report.py" "$od/report" >"$od/render.log" 2>&1
check "render_report exits 0" test $? = 0
check_report "$od/report"
for m in exclusive downgrade section; do
	[ -f /proc/sys/vm/munmap_lock_mode ] || [ "$m" = downgrade ] || continue
	check "$m: mmlockstat wrote JSON" test -s "$od/report/raw/$m/mmlockstat.jsonl"
	check "$m: munmapsnoop wrote JSON" test -s "$od/report/raw/$m/munmapsnoop.jsonl"
done
# Chromium loads this report on the host afterwards (pipeline.post.sh):
# under TCG it took minutes.

/usr/bin/python3 - "$od/report/raw" <<'PY' || _failed=1
import json, os, sys
raw = sys.argv[1]
def jl(p):
    try:
        return [json.loads(l) for l in open(p) if l.strip()]
    except (OSError, ValueError):
        return []
def check(what, cond, why=""):
    print(("ok - " if cond else "not ok - ") + what + ("" if cond else ": " + why))
    return cond
good = True
meta = json.load(open(os.path.join(raw, "meta.json")))
if not meta["mode_control"]:
    print("ok - exclusive/section story # SKIP no vm.munmap_lock_mode in this kernel")
    modes = ["downgrade"]
else:
    modes = ["exclusive", "downgrade"]
for mode in modes:
    wl = jl(os.path.join(raw, mode, "workload.jsonl"))
    if not check("%s: workload JSON present" % mode, wl):
        good = False
        continue
    o = wl[0]
    size = o["size_mb"] << 20
    calls = [c for c in jl(os.path.join(raw, mode, "munmapsnoop.jsonl"))
             if c.get("pid") == o["pid"] and c.get("len") == size]
    good &= check("%s: munmapsnoop saw the %d MiB munmap" % (mode, o["size_mb"]),
                  len(calls) == 1, "%d matching calls" % len(calls))
    ms = jl(os.path.join(raw, mode, "mmlockstat.jsonl"))
    wh = max((x["histograms"]["write_hold"]["max"] for x in ms
              if "write_hold" in x.get("histograms", {})), default=0)
    cmd = o["readers"]["cmdline"]
    if mode == "exclusive":
        # Anchored on the kernel's figures, not on munmap() as timed from
        # user space: under TCG the munmap thread can wait up to a 100 ms
        # round-robin slice for its vCPU inside the call but outside the
        # hold (seen: 42 ms hold, 55 ms syscall, 88 ms in user space).
        hold = calls[0]["write_hold_ns"] if calls else 0
        ur = calls[0]["unmap_region_ns"] if calls else 0
        good &= check("exclusive: /proc reader blocked >= half the munmap's "
                      "write hold (%.1f of %.1f ms; munmap() %.1f ms)"
                      % (cmd["overlap_max"] / 1e6, hold / 1e6,
                         o["munmap_ns"] / 1e6),
                      hold > 0 and cmd["overlap_max"] >= 0.5 * hold)
        # and the kernel's side of it: a read that the vCPU round robin
        # paused overlaps the munmap without waiting for the lock, a
        # contention wait does not
        rw = max((x["histograms"]["read_wait"]["max"] for x in ms
                  if "read_wait" in x.get("histograms", {})), default=0)
        good &= check("exclusive: mmlockstat read_wait max >= half the "
                      "munmap's write hold (%.1f of %.1f ms)"
                      % (rw / 1e6, hold / 1e6),
                      hold > 0 and rw >= 0.5 * hold)
        # the hold encloses the zap
        good &= check("exclusive: mmlockstat write_hold max (%.1f ms) "
                      "encloses munmapsnoop's unmap_region (%.1f ms)"
                      % (wh / 1e6, ur / 1e6),
                      ur > 0 and wh >= 0.99 * ur)
    if mode == "downgrade" and calls:
        c = calls[0]
        good &= check("downgrade: the munmap downgraded and held the write "
                      "lock < half the call (%.3f of %.1f ms)"
                      % (c["write_hold_ns"] / 1e6, c["total_ns"] / 1e6),
                      c.get("downgraded") in (True, 1)
                      and c["write_hold_ns"] < 0.5 * c["total_ns"])
sys.exit(0 if good else 1)
PY
finish
