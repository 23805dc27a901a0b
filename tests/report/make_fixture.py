#!/usr/bin/python3
"""make_fixture.py OUTDIR [--no-vma] [--unavailable KERNEL]: write the raw
data of a two-kernel report into OUTDIR/raw, in the layout scripts/report
writes (kernels.json, <kernel>/meta.json and host.json, <kernel>/<mode>/
with status.json and the JSON lines of munmap_test, mmlockstat -j and
munmapsnoop -j): the lab kernel's three modes and Debian's 6.12 (its own
behaviour, with mmlockstat's per-VMA lock histograms and "vma_locks").

The numbers are made up but shaped like a real 256 MiB run: exclusive
holds the write lock for the whole 186 ms munmap and the ps reader waits
behind it; downgrade holds it for 12 us and nobody waits; section drops it
between 64 MiB sections (its longest reader wait has no recorded
holder: the verdict names the longest one that has); 6.12's faults take VMA locks and never wait on
mmap_lock, while vma_start_write() waits twice for VMA readers.

  --no-vma           6.12 without the per-VMA lock fields (an mmlockstat
                     that does not print them)
  --unavailable K    kernel K did not run: its host.json holds only the
                     error scripts/report writes, nothing else
"""
import json
import os
import sys

MS = 1000000
US = 1000
SIZE_MB = 256
REPS = 2


def hist(values):
    """A histogram object as mmlockstat -j prints it."""
    if not values:
        return {"unit": "ns", "count": 0, "sum": 0, "max": 0, "p50": 0,
                "p99": 0, "buckets": []}
    bk = {}
    for v in values:
        le = (1 << max(1, int(v).bit_length())) - 1
        bk[le] = bk.get(le, 0) + 1
    s = sorted(values)
    return {"unit": "ns", "count": len(values), "sum": sum(values),
            "max": s[-1], "p50": s[(len(s) - 1) // 2],
            "p99": s[min(len(s) - 1, int(0.99 * len(s)))],
            "buckets": [{"le": k, "count": c} for k, c in sorted(bk.items())]}


def wait(kind, ns, comm, op, holder):
    return {"type": kind, "wait_ns": ns, "pid": 900, "tid": 903,
            "comm": comm, "op": op, "syscall": -1 if op == "fault" else 0,
            "holder": holder and {"pid": 900, "tid": 900, "comm": holder[0],
                                  "op": holder[1], "syscall": 11,
                                  "phase": holder[2]}}


# Per run: the big munmap of each rep (total, write, read, unmap_region,
# downgraded, call mode, sections, lock drops, waiters, wait sum, longest
# waiter), the mmlockstat waits, reader latencies.
RUNS = {
    ("lab", "exclusive"): {
        "calls": [(186 * MS, 186 * MS, 0, 185 * MS, False, "exclusive", 1,
                   0, 3, 420 * MS, 185500 * US),
                  (179 * MS, 179 * MS, 0, 178 * MS, False, "exclusive", 1,
                   0, 2, 300 * MS, 170 * MS)],
        "write_hold": [186 * MS, 179 * MS] + [20 * US] * 30,
        "read_wait": [185500 * US, 120 * MS, 170 * MS, 95 * MS, 11 * MS],
        "write_wait": [3 * MS],
        "top_waits": [wait("read", 185500 * US, "mt-ps", "other",
                           ("munmap_test", "munmap", "write")),
                      wait("read", 170 * MS, "mt-ps", "other",
                           ("munmap_test", "munmap", "write")),
                      wait("read", 120 * MS, "mt-fault", "fault",
                           ("munmap_test", "munmap", "write")),
                      wait("read", 95 * MS, "mt-fault", "fault", None),
                      wait("read", 11 * MS, "mt-fault", "fault", None),
                      wait("write", 3 * MS, "munmap_test", "mmap", None)],
        "cmdline": 186 * MS, "fault": 121 * MS,
    },
    ("lab", "downgrade"): {
        "calls": [(190 * MS, 12 * US, 189900 * US, 189 * MS, True,
                   "downgrade", 1, 0, 0, 0, 0),
                  (182 * MS, 14 * US, 181800 * US, 181 * MS, True,
                   "downgrade", 1, 0, 0, 0, 0)],
        "write_hold": [12 * US, 14 * US] + [20 * US] * 30,
        "read_hold": [189900 * US, 181800 * US],
        "dg_write": [12 * US, 14 * US], "dg_read": [189900 * US, 181800 * US],
        "read_wait": [], "write_wait": [], "top_waits": [],
        "cmdline": 900 * US, "fault": 700 * US,
    },
    ("lab", "section"): {
        "calls": [(201 * MS, 52 * MS, 140 * MS, 198 * MS, True, "section",
                   4, 3, 5, 160 * MS, 48 * MS),
                  (195 * MS, 50 * MS, 138 * MS, 193 * MS, True, "section",
                   4, 3, 4, 150 * MS, 47 * MS)],
        "write_hold": [52 * MS, 50 * MS] + [20 * US] * 30,
        "read_hold": [140 * MS, 138 * MS],
        "read_wait": [48 * MS, 47 * MS, 40 * MS, 30 * MS, 20 * MS, 10 * MS],
        "write_wait": [],
        "top_waits": [wait("read", 48 * MS, "mt-fault", "fault", None),
                      wait("read", 47 * MS, "mt-ps", "other",
                           ("munmap_test", "munmap", "write")),
                      wait("read", 40 * MS, "mt-fault", "fault", None),
                      wait("read", 30 * MS, "mt-fault", "fault", None),
                      wait("read", 20 * MS, "mt-ps", "other", None)],
        "cmdline": 49 * MS, "fault": 48500 * US,
    },
    ("debian-6.12", "downgrade"): {
        "calls": [(150 * MS, 21 * US, 149900 * US, 148 * MS, True,
                   "downgrade", 1, 0, 0, 0, 0),
                  (144 * MS, 19 * US, 143900 * US, 142 * MS, True,
                   "downgrade", 1, 0, 0, 0, 0)],
        "write_hold": [21 * US, 19 * US] + [15 * US] * 30,
        "read_hold": [149900 * US, 143900 * US],
        "dg_write": [21 * US, 19 * US], "dg_read": [149900 * US, 143900 * US],
        "read_wait": [], "write_wait": [], "top_waits": [],
        "vma": {"available": True, "faults": 61234, "fallbacks": 3,
                "vma_fallback_wait": [],
                "vma_write_wait": [1500 * US, 250 * US],
                "vma_write_lock": [2 * US] * 40 + [1500 * US, 250 * US]},
        "cmdline": 700 * US, "fault": 300 * US,
    },
}


def reader(max_ns, count):
    return dict(hist([5 * US] * (count - 1) + [max_ns]),
                overlap_count=count // 10, overlap_max=max_ns,
                overlap_max_start_ns=10 * MS, overlap_max_tid=903,
                max_start_ns=10 * MS)


def write_run(d, kernel, mode, r, vma):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "status.json"), "w") as f:
        json.dump({"mode": mode, "errors": [], "ok": True, "wall_s": 21.5,
                   "steps": {"workload": 0, "mmlockstat": 0,
                             "munmapsnoop": 0}}, f)
    with open(os.path.join(d, "workload.jsonl"), "w") as f:
        for rep, c in enumerate(r["calls"]):
            f.write(json.dumps({
                "schema": 1, "tool": "munmap_test", "rep": rep, "pid": 900,
                "size_mb": SIZE_MB, "page_size": 4096, "fault_threads": 2,
                "cmdline_reader": True, "writer": False,
                "populate_ns": 1700 * MS + rep * MS,
                "munmap_ns": c[0] + 300 * US,
                "munmap_start_ns": (rep + 1) * 10 ** 10,
                "munmap_end_ns": (rep + 1) * 10 ** 10 + c[0] + 300 * US,
                "readers": {"fault": reader(r["fault"], 20000 + rep),
                            "cmdline": reader(r["cmdline"], 7000 + rep)},
                "threads": [{"kind": "cmdline", "tid": 903, "count": 7000,
                             "max": r["cmdline"],
                             "overlap_max": r["cmdline"],
                             "overlap_max_start_ns": (rep + 1) * 10 ** 10}],
            }) + "\n")
    hs = {"write_hold": hist(r["write_hold"]),
          "read_hold": hist(r.get("read_hold", [])),
          "downgrade_write_phase": hist(r.get("dg_write", [])),
          "downgrade_read_phase": hist(r.get("dg_read", [])),
          "read_wait": hist(r["read_wait"]),
          "write_wait": hist(r["write_wait"])}
    o = {"schema": 1, "tool": "mmlockstat", "kernel": kernel,
         "interval_s": 9.5, "mode": "default", "probes": "fentry",
         "filter": {}, "histograms": hs, "top_holds": [],
         "top_waits": r["top_waits"],
         "drops": {"total": 0, "map_full": 0, "map_busy": 0,
                   "ringbuf_full": 0, "kprobe_misses": None,
                   "recursion_misses": 0, "ended_without_start": 0}}
    v = r.get("vma")
    if vma:
        o["vma_locks"] = {"available": False, "faults": 0, "fallbacks": 0}
        if v:
            o["vma_locks"] = {k: v[k] for k in ("available", "faults",
                                                "fallbacks")}
            for n in ("vma_fallback_wait", "vma_write_wait",
                      "vma_write_lock"):
                hs[n] = hist(v[n])
    with open(os.path.join(d, "mmlockstat.jsonl"), "w") as f:
        f.write(json.dumps(o) + "\n")
    with open(os.path.join(d, "munmapsnoop.jsonl"), "w") as f:
        for rep, c in enumerate(r["calls"]):
            # a small munmap of the workload first: not a big call
            f.write(json.dumps({
                "schema": 1, "tool": "munmapsnoop", "pid": 900, "tid": 900,
                "comm": "munmap_test", "op": "munmap", "len": 46115,
                "ts_ns": rep * 10 ** 10, "total_ns": 90 * US,
                "write_hold_ns": 80 * US, "read_hold_ns": 0,
                "unmap_region_ns": 40 * US, "downgraded": False,
                "mode": mode, "sections": 1, "lock_drops": 0, "waiters": 0,
                "wait_ns": 0, "max_wait_ns": 0}) + "\n")
            keys = ("total_ns", "write_hold_ns", "read_hold_ns",
                    "unmap_region_ns", "downgraded", "mode", "sections",
                    "lock_drops", "waiters", "wait_ns", "max_wait_ns")
            call = dict(zip(keys, c))
            call.update({"schema": 1, "tool": "munmapsnoop", "pid": 900,
                         "tid": 900, "comm": "munmap_test", "op": "munmap",
                         "len": SIZE_MB << 20,
                         "ts_ns": (rep + 1) * 10 ** 10 + 100 * US})
            f.write(json.dumps(call) + "\n")


def main(argv):
    out = argv[0]
    vma = "--no-vma" not in argv
    gone = argv[argv.index("--unavailable") + 1] \
        if "--unavailable" in argv else None
    raw = os.path.join(out, "raw")
    kernels = ["lab", "debian-6.12"]
    os.makedirs(raw, exist_ok=True)
    with open(os.path.join(raw, "kernels.json"), "w") as f:
        json.dump({"kernels": kernels}, f)
    for k in kernels:
        kd = os.path.join(raw, k)
        os.makedirs(kd, exist_ok=True)
        if k == gone:
            with open(os.path.join(kd, "host.json"), "w") as f:
                json.dump({"kernel": k, "error": "Debian's 6.12 kernel is "
                           "not unpacked: run 'make kernel KERNEL=%s'" % k},
                          f)
            continue
        lab = k == "lab"
        modes = ["exclusive", "downgrade", "section"] if lab else \
            ["downgrade"]
        rel = "6.1.192-mmlockscope" if lab else "6.12.118+deb12-amd64"
        meta = {"schema": 1, "tool": "experiment",
                "started": "2026-12-05T09:00:00+0000",
                "finished": "2026-12-05T09:02:00+0000",
                "machine": {"kernel": rel, "kernel_version": "#1 SMP",
                            "cpus": 2, "mem_mb": 2900,
                            "cpu_model": "QEMU TCG CPU", "thp": "madvise",
                            "series": ["0001-mm-mmap-add-vm.munmap_lock_"
                                       "mode.patch"] if lab else []},
                "params": {"size_mb": SIZE_MB, "reps": REPS,
                           "modes_requested": ["exclusive", "downgrade",
                                               "section"],
                           "modes": modes, "workload": "munmap_test",
                           "fault_threads": 2, "cmdline_reader": True,
                           "writer": False, "section_mb": 64,
                           "stress_s": 10,
                           "tools": ["mmlockstat", "munmapsnoop"]},
                "mode_control": lab, "failed_modes": [],
                "note": None if lab else "/proc/sys/vm/munmap_lock_mode is "
                "absent: this kernel has no munmap_lock_mode patch; only "
                "the native behaviour (downgrade) was measured"}
        with open(os.path.join(kd, "meta.json"), "w") as f:
            json.dump(meta, f)
        with open(os.path.join(kd, "host.json"), "w") as f:
            json.dump({"kernel": k, "kernel_source": "fixture", "vm_mem":
                       "2048M", "vm_cpus": 2, "accel": "tcg",
                       "guest_exit": 0, "guest_wall_s": 60}, f)
        for m in modes:
            write_run(os.path.join(kd, m), rel, m, RUNS[(k, m)], vma)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
