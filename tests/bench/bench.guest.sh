#!/usr/bin/env bash
# bench.guest.sh: the overhead benchmark's machinery, on a tiny configuration
# (nothing attached vs the bpftrace fentry read-side counter, 2 repetitions).
# Checks that the table and JSON are produced with sane values and that the
# ratios are the medians' ratios. No timing pass/fail: figures under TCG are
# noisy, and the goals are printed by `make bench`, not asserted here.
. "$(dirname "$0")/../lib.sh"

if ! in_guest; then
	skip "overhead benchmark" "runs in the guest only (tests/run)"
	finish
fi
out=$(test_out bench)
rm -rf "$out/run"

fb=$TOP/workloads/bin/faultbench
if [ ! -x "$fb" ]; then
	# `make workloads` builds it once workloads/Makefile lists it.
	fb=$out/faultbench
	check "build faultbench" cc -O2 -pthread -o "$fb" "$TOP/workloads/faultbench.c"
fi

FAULTBENCH=$fb "$TOP/scripts/bench-guest" --out "$out/run" --reps 2 \
	--configs bpftrace-fentry-read --variants fault --iters 4 --quiet \
	>"$out/stdout" 2>"$out/stderr"
rc=$?
check "bench-guest exits 0 (stderr: $out/stderr)" [ "$rc" = 0 ]
for f in table.md results.json runs.jsonl meta.json; do
	check "bench-guest wrote $f" [ -s "$out/run/$f" ]
done

# Everything else is checked from the JSON, in Python.
/usr/bin/python3 - "$out/run" <<'EOF'
import json, os, statistics, sys
d = sys.argv[1]
res = json.load(open(os.path.join(d, "results.json")))
runs = [json.loads(l) for l in open(os.path.join(d, "runs.jsonl")) if l.strip()]
table = open(os.path.join(d, "table.md")).read()
failed = False

def check(what, cond, why=""):
    global failed
    if cond:
        print("ok - " + what)
    else:
        print("not ok - %s: %s" % (what, why))
        failed = True

check("results.json is schema 1 from bench-overhead",
      res.get("schema") == 1 and res.get("tool") == "bench-overhead",
      "schema %r tool %r" % (res.get("schema"), res.get("tool")))
on = [r for r in runs if r["config"] == "bpftrace-fentry-read"]
off = [r for r in runs if r["config"] == "off"]
check("2 interleaved runs per configuration",
      len(on) == 2 and len(off) == 2 and
      [r["config"] for r in runs] == ["off", "bpftrace-fentry-read"] * 2,
      "order %s" % [r["config"] for r in runs])
check("every run succeeded", all(r["status"] == "ok" for r in runs),
      "; ".join(r["status"] for r in runs if r["status"] != "ok"))
rows = {r["config"]: r for r in res["rows"] if r["variant"] == "fault"}
check("table has rows for off and bpftrace-fentry-read",
      set(rows) == {"off", "bpftrace-fentry-read"}, "rows %s" % list(rows))
if failed or not all(r["status"] == "ok" for r in runs):
    sys.exit(1)

for r in runs:
    fb = r["fb"]
    # 4 iterations x 2 threads x 256 pages; the kernel's own minflt count
    # must agree (each touch is exactly one fault), sys time per fault
    # between 100 ns and 1 ms is sane for any machine this runs on.
    ok = (fb["faults"] == 2048 and abs(fb["minflt"] - 2048) < 100 and
          100 < fb["cpu_ns_per_fault"] < 1e6 and fb["faults_per_s"] > 0 and
          0 <= fb["sys_ns_per_fault"] <= fb["cpu_ns_per_fault"] and
          abs(fb["cpu_ns_per_fault"] -
              (fb["sys_ns"] + fb["user_ns"]) / fb["faults"]) < 0.1)
    check("run %s rep %d: faults=%d minflt=%d %.0f ns/fault %.0f faults/s"
          % (r["config"], r["rep"], fb["faults"], fb["minflt"],
             fb["cpu_ns_per_fault"], fb["faults_per_s"]), ok,
          json.dumps(fb))

row = rows["bpftrace-fentry-read"]
for metric, ratio in (("cpu_ns_per_fault", "cpu_ratio"),
                      ("sys_ns_per_fault", "sys_ratio")):
    m_on = statistics.median(r["fb"][metric] for r in on)
    m_off = statistics.median(r["fb"][metric] for r in off)
    check("%s is median(on)/median(off) of %s (%.4f)"
          % (ratio, metric, m_on / m_off),
          abs(row[ratio] - m_on / m_off) < 1e-9,
          "table %r vs %r" % (row[ratio], m_on / m_off))
    check("off row %s median is the median of the off runs" % metric,
          rows["off"][metric]["median"] == m_off and
          rows["off"][metric]["min"] <= m_off <= rows["off"][metric]["max"],
          json.dumps(rows["off"][metric]))
# Paired ratio: each traced run against the off run just before it.
pr = statistics.median(b["fb"]["cpu_ns_per_fault"] / a["fb"]["cpu_ns_per_fault"]
                       for a, b in zip(runs[0::2], runs[1::2]))
check("paired ratio is the median of run/preceding-off (%.4f)" % pr,
      abs(row["paired_cpu_ratio"] - pr) < 1e-9,
      "%r vs %r" % (row["paired_cpu_ratio"], pr))
f_on = statistics.median(r["fb"]["faults_per_s"] for r in on)
f_off = statistics.median(r["fb"]["faults_per_s"] for r in off)
check("faults/s ratio is median(on)/median(off)",
      abs(row["fps_ratio"] - f_on / f_off) < 1e-9,
      "%r vs %r" % (row["fps_ratio"], f_on / f_off))
# Each fault takes the read side once: down_read_trylock + up_read, so the
# tool's own count is about 2 per fault (plus the mmap/munmap paths, other
# rwsems using down_read_trylock/up_read, and background activity).
epf = row.get("events_per_fault")
check("fentry counter's own count parsed: %s events/fault" % epf,
      epf is not None and 1.9 <= epf <= 10, "counts %s" % row.get("counts"))
t = row.get("tool") or {}
check("tool memory recorded (RSS %s KiB, BPF maps %s bytes)"
      % (t.get("rss_kib"), t.get("bpf_map_bytes")),
      (t.get("rss_kib") or 0) > 1000 and t.get("bpf_map_bytes") is not None
      and t["bpf_map_bytes"] > 0, json.dumps(t))
med = "{:,.0f}".format(row["cpu_ns_per_fault"]["median"])
pct = "%+.1f %%" % ((row["cpu_ratio"] - 1) * 100)
check("table.md shows the measured median and ratio (%s, %s)" % (med, pct),
      ("`bpftrace-fentry-read`" in table and med in table and pct in table),
      "not found in table.md")
sys.exit(1 if failed else 0)
EOF
[ $? = 0 ] || _failed=1
finish
