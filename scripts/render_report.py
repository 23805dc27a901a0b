#!/usr/bin/python3
"""render_report.py: turn an experiment's raw JSON into the mmlockscope report.

Usage: /usr/bin/python3 scripts/render_report.py OUTDIR [--raw RAWDIR]

Reads RAWDIR (default OUTDIR/raw, written by scripts/experiment) and writes
  OUTDIR/index.html   self-contained page (inline SVG plots, no network)
  OUTDIR/summary.md   the same tables in text, with bcc-style histograms
  OUTDIR/trace.json   Chrome Trace Event format (Perfetto, chrome://tracing)
Data flows one way: it reads JSON only, never tool text output.
Needs Debian's python3-matplotlib (run it with /usr/bin/python3).
"""
import html
import io
import json
import math
import os
import re
import sys

MODES = ("exclusive", "downgrade", "section")
MODE_COLORS = {"exclusive": "#d62728", "downgrade": "#1f77b4",
               "section": "#2ca02c"}
HISTS = ("write_hold", "read_hold", "downgrade_write_phase",
         "downgrade_read_phase", "read_wait", "write_wait")
HIST_TITLES = {
    "write_hold": "write-hold (mmap_lock held for write)",
    "read_hold": "read-hold (mmap_lock held for read)",
    "downgrade_write_phase": "downgraded holds: write phase",
    "downgrade_read_phase": "downgraded holds: read phase",
    "read_wait": "reader wait (blocked in mmap_read_lock)",
    "write_wait": "writer wait (blocked in mmap_write_lock)",
}
READER_KINDS = ("fault", "cmdline", "writer")
READER_TITLES = {"fault": "page-fault threads", "cmdline": "ps-like /proc/PID/cmdline reader",
                 "writer": "mmap/mprotect/munmap writer"}


# ---------------------------------------------------------------- loading

def load_jsonl(path):
    """Objects of a JSON-lines file; (objects, error lines)."""
    objs, bad = [], 0
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    objs.append(json.loads(line))
                except ValueError:
                    bad += 1
    except OSError:
        return None, 0
    return objs, bad


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_text(path, limit=4000):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-limit:]
    except OSError:
        return ""


def bucket_pct(buckets, count, q):
    """Upper bound of the bucket holding the q-quantile."""
    if not count:
        return 0
    want = max(1, math.ceil(q * count))
    acc = 0
    for b in sorted(buckets, key=lambda b: b["le"]):
        acc += b["count"]
        if acc >= want:
            return b["le"]
    return buckets[-1]["le"] if buckets else 0


def to_ns(v, unit):
    mult = {"ns": 1, "us": 1000, "ms": 1000000, "s": 1000000000}.get(unit, 1)
    return v * mult


def merge_hists(objs):
    """Per histogram name: the tool's own object if only one interval had
    data, else a merge (counts/sums added, max of max, percentiles from the
    merged buckets; marked derived=True)."""
    per = {}
    for o in objs:
        for name, h in (o.get("histograms") or {}).items():
            per.setdefault(name, []).append(h)
    out = {}
    for name, hs in per.items():
        nz = [h for h in hs if h.get("count")]
        if len(nz) <= 1:
            h = dict(nz[0] if nz else hs[-1])
            unit = h.get("unit", "ns")
            h = {k: (to_ns(v, unit) if k in ("sum", "max", "p50", "p99")
                     else v) for k, v in h.items()}
            h["buckets"] = [{"le": to_ns(b["le"], unit), "count": b["count"]}
                            for b in h.get("buckets", [])]
            h["derived"] = False
            out[name] = h
            continue
        bk = {}
        for h in nz:
            unit = h.get("unit", "ns")
            for b in h.get("buckets", []):
                le = to_ns(b["le"], unit)
                bk[le] = bk.get(le, 0) + b["count"]
        buckets = [{"le": k, "count": v} for k, v in sorted(bk.items())]
        count = sum(h["count"] for h in nz)
        out[name] = {
            "unit": "ns", "count": count,
            "sum": sum(to_ns(h.get("sum", 0), h.get("unit", "ns")) for h in nz),
            "max": max(to_ns(h.get("max", 0), h.get("unit", "ns")) for h in nz),
            "p50": bucket_pct(buckets, count, 0.50),
            "p99": bucket_pct(buckets, count, 0.99),
            "buckets": buckets, "derived": True,
        }
    return out


def load_mode(rawdir, mode):
    d = os.path.join(rawdir, mode)
    m = {"mode": mode, "dir": d, "errors": []}
    st = load_json(os.path.join(d, "status.json"))
    if st is None:
        m["errors"].append("no status.json: the run of this mode did not "
                           "finish (see the experiment log)")
        st = {"ok": False}
    m["status"] = st
    m["errors"] += st.get("errors", [])
    wl, bad = load_jsonl(os.path.join(d, "workload.jsonl"))
    m["workload"] = [o for o in (wl or []) if o.get("tool") == "munmap_test"]
    if bad:
        m["errors"].append("workload.jsonl: %d unparsable line(s)" % bad)
    ms, bad = load_jsonl(os.path.join(d, "mmlockstat.jsonl"))
    m["mmlockstat_present"] = ms is not None
    m["mmlockstat_objs"] = ms or []
    m["hists"] = merge_hists(ms or [])
    if bad:
        m["errors"].append("mmlockstat.jsonl: %d unparsable line(s)" % bad)
    sn, bad = load_jsonl(os.path.join(d, "munmapsnoop.jsonl"))
    m["munmapsnoop_present"] = sn is not None
    m["calls_all"] = [o for o in (sn or []) if "total_ns" in o]
    pids = {o.get("pid") for o in m["workload"]}
    m["calls"] = [o for o in m["calls_all"] if o.get("pid") in pids] \
        if pids else m["calls_all"]
    if bad:
        m["errors"].append("munmapsnoop.jsonl: %d unparsable line(s)" % bad)
    m["stress"] = sorted(f for f in os.listdir(d) if f.startswith(
        "stress-ng-") and f.endswith(".yaml")) if os.path.isdir(d) else []
    m["stress_metrics"] = []
    for i, f in enumerate(m["stress"]):
        m["stress_metrics"] += [dict(x, rep=i) for x in
                                stress_metrics(os.path.join(d, f))]
    m["ok"] = bool(st.get("ok")) and not m["errors"]
    return m


def stress_metrics(path):
    """The `metrics:` list of a stress-ng --yaml file (flat key: value)."""
    out, cur, inm = [], None, False
    for line in read_text(path, 1 << 20).splitlines():
        if line.startswith("metrics:"):
            inm = True
            continue
        if inm and line and not line[0].isspace():
            break
        mm = re.match(r"\s*(- )?([\w-]+): (.*)$", line) if inm else None
        if not mm:
            continue
        if mm.group(1):
            cur = {}
            out.append(cur)
        if cur is not None:
            cur[mm.group(2)] = mm.group(3).strip("'")
    return out


def load_all(rawdir):
    meta = load_json(os.path.join(rawdir, "meta.json")) or {}
    host = load_json(os.path.join(rawdir, "host.json")) or {}
    modes = (meta.get("params") or {}).get("modes") or \
        [x for x in MODES if os.path.isdir(os.path.join(rawdir, x))]
    modes = [load_mode(rawdir, x) for x in modes]
    errs = []
    if not meta:
        errs.append("no meta.json: the experiment did not start in the guest")
    if host.get("guest_exit") not in (None, 0):
        errs.append("the guest run exited with status %s%s (see "
                    "experiment.log, console.log)" % (
                        host["guest_exit"], " (timeout)"
                        if host["guest_exit"] == 124 else ""))
    meta["_errors"] = errs
    return meta, host, modes


# ------------------------------------------------------------- formatting

def fmt_ns(v):
    if v is None:
        return "–"
    v = float(v)
    if v < 1e3:
        return "%d ns" % v
    if v < 1e6:
        return "%.2f µs" % (v / 1e3)
    if v < 1e9:
        return "%.2f ms" % (v / 1e6)
    return "%.3f s" % (v / 1e9)


def fmt_bytes(v):
    if v is None:
        return "–"
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if v >= div and v % (div >> 4) == 0:
            return "%g %s" % (v / div, unit)
    return "%d B" % v


def fmt_ratio(a, b):
    if not a or not b:
        return "–"
    return "%.2fx" % (a / b)


def big_calls(m):
    """munmap calls of the workload's big region (the measured munmap)."""
    sizes = {o.get("size_mb", 0) << 20 for o in m["workload"]}
    big = [c for c in m["calls"] if c.get("op") == "munmap"
           and c.get("len") in sizes]
    return big or sorted(m["calls"], key=lambda c: -c.get("total_ns", 0))[:8]


# ------------------------------------------------------------------ plots

def _mpl():
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    matplotlib.rcParams.update({"svg.fonttype": "path", "font.size": 9,
                                "svg.hashsalt": "mmlockscope"})
    return plt


def svg_of(fig):
    plt = _mpl()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    s = buf.getvalue()
    s = s[s.find("<svg"):]
    # Drop the RDF metadata block: namespace URLs only, but noise.
    return re.sub(r"<metadata>.*?</metadata>", "", s, flags=re.S)


def _dur_formatter():
    from matplotlib.ticker import FuncFormatter
    return FuncFormatter(lambda v, _: fmt_ns(v).replace(".00", ""))


def log2_grid(buckets):
    """Map buckets to (k -> count) with k = log2(upper bound + 1)."""
    out = {}
    for b in buckets:
        k = max(0, int(round(math.log2(b["le"] + 1)))) if b["le"] >= 0 else 0
        out[k] = out.get(k, 0) + b["count"]
    return out


def plot_overlay(series, title, xlabel="duration"):
    """series: [(label, color, buckets)] drawn as overlaid stairs."""
    plt = _mpl()
    grids = [(lab, col, log2_grid(b)) for lab, col, b in series if b]
    fig, ax = plt.subplots(figsize=(6.4, 2.8))
    if not grids:
        ax.text(0.5, 0.5, "no data", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
        return svg_of(fig)
    kmin = min(min(g) for _, _, g in grids)
    kmax = max(max(g) for _, _, g in grids)
    edges = [2.0 ** (k - 1) if k else 0.5 for k in range(kmin, kmax + 1)]
    edges.append(2.0 ** kmax)
    for lab, col, g in grids:
        counts = [g.get(k, 0) for k in range(kmin, kmax + 1)]
        ax.stairs(counts, edges, label="%s (n=%d)" % (lab, sum(counts)),
                  color=col, linewidth=1.6, fill=False)
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1)
    ax.xaxis.set_major_formatter(_dur_formatter())
    ax.set_xlabel(xlabel + " (log2 buckets)")
    ax.set_ylabel("count")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return svg_of(fig)


def plot_phases(modes):
    """Funcgraph-style bars per munmap call: write phase, read phase,
    unmap_region (log x so an 8 us write phase shows next to a 1 s zap)."""
    plt = _mpl()
    rows = []
    for m in modes:
        for i, c in enumerate(big_calls(m)):
            rows.append(("%s #%d" % (m["mode"], i), m["mode"], c))
    fig, ax = plt.subplots(figsize=(7.2, 0.9 + 0.42 * max(1, len(rows))))
    if not rows:
        ax.text(0.5, 0.5, "no munmapsnoop data", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
        return svg_of(fig)
    phases = (("write_hold_ns", "write phase", "#d62728"),
              ("read_hold_ns", "read phase", "#1f77b4"),
              ("unmap_region_ns", "unmap_region", "#7f7f7f"),
              ("total_ns", "total", "#000000"))
    h = 0.2
    vals = [c.get(k) for _, _, c in rows for k, _, _ in phases if c.get(k)]
    lo = 10 ** math.floor(math.log10(max(1, min(vals or [1])) / 3))
    hi = max(vals or [10]) * 8
    seen = set()
    for y, (_, _, c) in enumerate(rows):
        for j, (key, lab, col) in enumerate(phases):
            v = c.get(key) or 0
            if v > 0:
                ax.barh(y + (j - 1.5) * h, v - lo, height=h, left=lo,
                        color=col, label=None if lab in seen else lab)
                seen.add(lab)
                ax.text(v * 1.15, y + (j - 1.5) * h, fmt_ns(v), va="center",
                        fontsize=7)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r[0] for r in rows])
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    ax.xaxis.set_major_formatter(_dur_formatter())
    ax.set_xlabel("duration per munmap call (log scale)")
    ax.set_title("munmap phases per call (munmapsnoop)")
    ax.grid(True, axis="x", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, fontsize=8, loc="upper left",
                  bbox_to_anchor=(1.01, 1.0))
    return svg_of(fig)


# ----------------------------------------------------------------- tables

def pct_rows(modes):
    """(hist, mode, h, ratios) for every histogram present."""
    names = [n for n in HISTS if any(n in m["hists"] for m in modes)]
    names += sorted({n for m in modes for n in m["hists"]} - set(HISTS))
    base = next((m for m in modes if m["mode"] == "downgrade"), None)
    rows = []
    for n in names:
        for m in modes:
            h = m["hists"].get(n)
            if h is None:
                continue
            b = base["hists"].get(n) if base else None
            rows.append((n, m["mode"], h,
                         (fmt_ratio(h.get("p99"), b and b.get("p99")),
                          fmt_ratio(h.get("max"), b and b.get("max")))))
    return rows


def user_rows(modes):
    rows = []
    for m in modes:
        for o in m["workload"]:
            rows.append((m["mode"], o))
    return rows


def text_hist(h, width=40):
    """bcc-style log2 histogram."""
    lines = ["%24s : %-8s %s" % ("nsecs", "count", "distribution")]
    g = log2_grid(h.get("buckets", []))
    if not g:
        return "    (empty)"
    top = max(g.values()) or 1
    for k in range(min(g), max(g) + 1):
        lo = 0 if k == 0 else 2 ** (k - 1)
        hi = 2 ** k - 1
        c = g.get(k, 0)
        stars = int(round(width * c / top))
        lines.append("%10d -> %-10d : %-8d |%-*s|" %
                     (lo, hi, c, width, "*" * stars))
    return "\n".join(lines)


# ------------------------------------------------------------- trace.json

def chrome_trace(modes):
    ev = []
    for pi, m in enumerate(modes, 1):
        ev.append({"ph": "M", "name": "process_name", "pid": pi, "tid": 0,
                   "args": {"name": "mode: %s" % m["mode"]}})
        named = set()

        def tname(tid, name):
            if tid not in named:
                named.add(tid)
                ev.append({"ph": "M", "name": "thread_name", "pid": pi,
                           "tid": tid, "args": {"name": name}})
        for c in m["calls_all"]:
            tid = c.get("tid", 0)
            tname(tid, "%s %s" % (c.get("comm", "?"), tid))
            total = c.get("total_ns", 0)
            # ts_ns is the call's entry (bpf_ktime_get_ns, CLOCK_MONOTONIC).
            start = c.get("ts_ns", 0)
            wr, rd = c.get("write_hold_ns") or 0, c.get("read_hold_ns") or 0
            ur = c.get("unmap_region_ns") or 0
            args = {k: c.get(k) for k in ("len", "mode", "downgraded",
                                          "sections", "lock_drops",
                                          "waiters", "wait_ns")}
            ev.append({"ph": "X", "name": c.get("op", "munmap"),
                       "cat": "munmap", "pid": pi, "tid": tid,
                       "ts": start / 1e3, "dur": total / 1e3, "args": args})
            if wr:
                ev.append({"ph": "X", "name": "write phase", "cat": "lock",
                           "pid": pi, "tid": tid, "ts": start / 1e3,
                           "dur": wr / 1e3})
            if rd:
                ev.append({"ph": "X", "name": "read phase", "cat": "lock",
                           "pid": pi, "tid": tid, "ts": (start + wr) / 1e3,
                           "dur": rd / 1e3})
            if ur:
                # unmap_region ends where the lock phases end; its exact
                # start is not in the event (placement approximate).
                end = start + (wr + rd if rd else wr)
                end = min(max(end, start + ur), start + total)
                ev.append({"ph": "X", "name": "unmap_region", "cat": "mm",
                           "pid": pi, "tid": tid, "ts": (end - ur) / 1e3,
                           "dur": ur / 1e3,
                           "args": {"placement": "approximate"}})
        for o in m["workload"]:
            tid = o.get("pid", 0)
            tname(tid, "munmap_test %d" % tid)
            ev.append({"ph": "X", "name": "munmap() [userspace, rep %d]"
                       % o.get("rep", 0), "cat": "workload", "pid": pi,
                       "tid": tid, "ts": o["munmap_start_ns"] / 1e3,
                       "dur": o["munmap_ns"] / 1e3,
                       "args": {"size_mb": o.get("size_mb")}})
            for t in o.get("threads", []):
                if not t.get("overlap_max"):
                    continue
                tname(t["tid"], "%s reader %d" % (t["kind"], t["tid"]))
                ev.append({"ph": "X", "name": "blocked: longest %s op "
                           "overlapping munmap" % t["kind"],
                           "cat": "waiter", "pid": pi, "tid": t["tid"],
                           "ts": t["overlap_max_start_ns"] / 1e3,
                           "dur": t["overlap_max"] / 1e3,
                           "args": {"rep": o.get("rep"),
                                    "ops_in_rep": t.get("count")}})
    return {"traceEvents": ev, "displayTimeUnit": "ms",
            "otherData": {"producer": "mmlockscope render_report.py"}}


# ------------------------------------------------------------- summary.md

def md_table(head, rows):
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(out)


def params_lines(meta, host):
    p = meta.get("params", {})
    mach = meta.get("machine", {})
    out = [
        ("kernel", "%s (%s)" % (mach.get("kernel", "?"),
                                mach.get("kernel_version", "?"))),
        ("kernel source", host.get("kernel_source") or "?"),
        ("series", ", ".join(mach.get("series") or []) or "(empty)"),
        ("machine", "%s CPUs, %s MiB, %s" % (mach.get("cpus"), mach.get("mem_mb"),
                                           mach.get("cpu_model", "?"))),
        ("THP", mach.get("thp", "?")),
        ("workload", "%s, size %s MiB, %s reps, %s fault threads, cmdline "
         "reader %s, writer %s" % (p.get("workload"), p.get("size_mb"),
                                   p.get("reps"), p.get("fault_threads"),
                                   "on" if p.get("cmdline_reader") else "off",
                                   "on" if p.get("writer") else "off")),
        ("modes", "%s (requested: %s); section size %s MiB" % (
            " ".join(p.get("modes") or []),
            " ".join(p.get("modes_requested") or []), p.get("section_mb"))),
        ("tools", " ".join(p.get("tools") or []) or "none"),
        ("started", "%s, finished %s" % (meta.get("started", "?"),
                                         meta.get("finished", "?"))),
    ]
    for k in sorted(host):
        if k != "kernel_source":
            out.append(("host " + k.replace("_", " "), host[k]))
    return out


def workload_cells(o, kind):
    r = (o.get("readers") or {}).get(kind)
    if not r:
        return ["–"] * 4
    return [fmt_ns(r["max"]), fmt_ns(r["overlap_max"]), fmt_ns(r["p99"]),
            str(r["count"])]


def summary_md(meta, host, modes):
    L = ["# mmlockscope report", ""]
    if meta.get("note"):
        L += ["> **Note:** " + meta["note"], ""]
    failed = [m for m in modes if not m["ok"]]
    if failed or not modes or meta["_errors"]:
        L += ["## Failures", ""]
        for err in meta["_errors"]:
            L.append("- " + err)
        if not modes:
            L.append("- no mode was run (no raw data)")
        for m in failed:
            for e in m["errors"] or ["status not ok"]:
                L.append("- **%s**: %s" % (m["mode"], e))
        L.append("")
    L += ["## Parameters", "", md_table(["", ""], params_lines(meta, host)), ""]
    L += ["## Lock hold and wait (mmlockstat)", "",
          "Ratios are against `downgrade` (the upstream behaviour).", ""]
    rows = [(n, mo, h["count"], fmt_ns(h.get("p50")), fmt_ns(h.get("p99")),
             fmt_ns(h.get("max")), r[0], r[1])
            for n, mo, h, r in pct_rows(modes)]
    L.append(md_table(["histogram", "mode", "count", "p50", "p99", "max",
                       "p99 vs downgrade", "max vs downgrade"], rows)
             if rows else "_no mmlockstat data_")
    L.append("")
    L += ["## munmap calls (munmapsnoop)", ""]
    crow = []
    for m in modes:
        for i, c in enumerate(big_calls(m)):
            crow.append((m["mode"], i, c.get("op"), fmt_bytes(c.get("len")),
                         fmt_ns(c.get("total_ns")),
                         fmt_ns(c.get("write_hold_ns")),
                         fmt_ns(c.get("read_hold_ns")),
                         fmt_ns(c.get("unmap_region_ns")),
                         {True: "yes", False: "no"}.get(c.get("downgraded"),
                                                        c.get("downgraded")),
                         c.get("mode"),
                         c.get("sections"), c.get("lock_drops"),
                         c.get("waiters"), fmt_ns(c.get("wait_ns")),
                         fmt_ns(c.get("max_wait_ns"))))
    L.append(md_table(["mode", "#", "op", "len", "total", "write hold",
                       "read hold", "unmap_region", "downgraded",
                       "call mode", "sections", "lock drops", "waiters",
                       "wait (sum)", "longest waiter"], crow) if crow else
             "_no munmapsnoop data_")
    L.append("")
    L += ["## Userspace-measured latency (munmap_test) vs the tool", "",
          "`max` is the longest op in the rep; `overlap max` the longest op "
          "that overlapped the munmap() call. The tool's read_wait/write_wait "
          "cover the whole mode (all reps).", ""]
    urows = []
    for mo, o in user_rows(modes):
        m = next(x for x in modes if x["mode"] == mo)
        rw = m["hists"].get("read_wait", {})
        ww = m["hists"].get("write_wait", {})
        row = [mo, o["rep"], fmt_ns(o["munmap_ns"]), fmt_ns(o["populate_ns"])]
        for k in READER_KINDS:
            row += workload_cells(o, k)
        row += [fmt_ns(rw.get("max")), fmt_ns(rw.get("p99")),
                fmt_ns(ww.get("max"))]
        urows.append(row)
    head = ["mode", "rep", "munmap", "populate"]
    for k in READER_KINDS:
        head += ["%s max" % k, "%s overlap max" % k, "%s p99" % k,
                 "%s ops" % k]
    head += ["tool read_wait max", "tool read_wait p99", "tool write_wait max"]
    L.append(md_table(head, urows) if urows else "_no workload data_")
    L.append("")
    srows = [(m["mode"], x["rep"], x.get("stressor"), x.get("bogo-ops"),
              x.get("bogo-ops-per-second-real-time"),
              x.get("wall-clock-time"), x.get("system-time"))
             for m in modes for x in m["stress_metrics"]]
    if srows:
        L += ["## stress-ng metrics", "", md_table(
            ["mode", "rep", "stressor", "bogo ops", "bogo ops/s (real)",
             "wall s", "system s"], srows), ""]
    L += ["## Histograms (bcc-style)", ""]
    for n in HISTS:
        for m in modes:
            h = m["hists"].get(n)
            if h:
                L += ["### %s — %s" % (n, m["mode"]), "", "```",
                      text_hist(h), "```", ""]
    for k in READER_KINDS:
        for m in modes:
            for o in m["workload"]:
                r = (o.get("readers") or {}).get(k)
                if r:
                    L += ["### userspace %s latency — %s rep %d"
                          % (k, m["mode"], o["rep"]), "", "```",
                          text_hist(r), "```", ""]
    L += ["## Status", "", md_table(
        ["mode", "ok", "wall", "errors"],
        [(m["mode"], "yes" if m["ok"] else "**FAILED**",
          "%s s" % m["status"].get("wall_s", "?"),
          "; ".join(m["errors"]) or "–") for m in modes]), ""]
    return "\n".join(L)


# ------------------------------------------------------------- index.html

CSS = """
body{font-family:sans-serif;margin:1.5em auto;max-width:1100px;color:#222}
h1{font-size:1.5em} h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.85em;display:block;overflow-x:auto}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;white-space:nowrap}
td:first-child,th:first-child{text-align:left}
table.kv td{text-align:left;white-space:normal}
h3{font-size:.95em;margin:.8em 0 .2em}
.fail{background:#fdd;border:1px solid #d33;padding:.5em 1em}
.note{background:#ffd;border:1px solid #cc3;padding:.5em 1em}
.plots{display:flex;flex-wrap:wrap;gap:8px} .plots svg{max-width:100%;height:auto}
pre{font-size:.75em;background:#f6f6f6;padding:.5em;overflow-x:auto}
"""


def h_table(head, rows, cls=None):
    e = html.escape
    out = ["<table%s><tr>" % (" class='%s'" % cls if cls else "") + "".join("<th>%s</th>" % e(str(h)) for h in head)
           + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join("<td>%s</td>" % e(str(x)) for x in r)
                   + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def md_to_rows(md, heading):
    """Reuse the summary's tables: rows under '## heading'."""
    sec = md.split("## " + heading, 1)
    if len(sec) < 2:
        return None, []
    lines = [l for l in sec[1].split("\n## ", 1)[0].splitlines()
             if l.startswith("|")]
    if len(lines) < 2:
        return None, []
    split = lambda l: [c.strip() for c in l.strip().strip("|").split(" | ")]
    return split(lines[0]), [split(l) for l in lines[2:]]


def index_html(meta, host, modes, md):
    e = html.escape
    P = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
         "<title>mmlockscope report</title><style>%s</style></head><body>"
         % CSS, "<h1>mmlockscope: munmap and mmap_lock</h1>"]
    if meta.get("note"):
        P.append("<p class='note'>%s</p>" % e(meta["note"]))
    failed = [m for m in modes if not m["ok"]]
    if failed or not modes or meta["_errors"]:
        P.append("<div class='fail'><b>Failed runs</b><ul>")
        for err in meta["_errors"]:
            P.append("<li>%s</li>" % e(err))
        if not modes:
            P.append("<li>no mode was run (no raw data)</li>")
        for m in failed:
            for err in m["errors"] or ["status not ok"]:
                P.append("<li><b>%s</b>: %s</li>" % (e(m["mode"]), e(err)))
        P.append("</ul>Logs: <code>raw/&lt;mode&gt;/*.err</code>, "
                 "<code>experiment.log</code>.</div>")
    P.append("<h2>Parameters</h2>")
    P.append(h_table(["", ""], params_lines(meta, host), "kv"))

    P.append("<h2>Lock hold and wait per mode (mmlockstat)</h2><div class='plots'>")
    for n in HISTS:
        series = [(m["mode"], MODE_COLORS.get(m["mode"], None),
                   m["hists"][n]["buckets"]) for m in modes
                  if n in m["hists"]]
        if series:
            P.append(plot_overlay(series, HIST_TITLES[n]))
        elif n in ("write_hold", "read_hold", "read_wait"):
            P.append("<p>No data for %s.</p>" % e(HIST_TITLES[n]))
    P.append("</div>")
    head, rows = md_to_rows(md, "Lock hold and wait (mmlockstat)")
    P.append(h_table(head, rows) if head else "<p>No mmlockstat data.</p>")

    P.append("<h2>munmap phases per call (munmapsnoop)</h2>")
    P.append("<p>Like the function_graph trace in dd2283f2605e: how much of "
             "each munmap ran under the write lock, how much under the read "
             "lock, and the time in <code>unmap_region()</code>.</p>")
    if any(big_calls(m) for m in modes):
        P.append("<div class='plots'>%s</div>" % plot_phases(modes))
    head, rows = md_to_rows(md, "munmap calls (munmapsnoop)")
    P.append(h_table(head, rows) if head else "<p>No munmapsnoop data.</p>")

    P.append("<h2>Userspace-measured latency vs the tool</h2><div class='plots'>")
    for k in READER_KINDS:
        series = []
        for m in modes:
            bk = {}
            for o in m["workload"]:
                for b in ((o.get("readers") or {}).get(k) or {}).get("buckets", []):
                    bk[b["le"]] = bk.get(b["le"], 0) + b["count"]
            if bk:
                series.append((m["mode"], MODE_COLORS.get(m["mode"]),
                               [{"le": a, "count": c} for a, c in bk.items()]))
        if series:
            P.append(plot_overlay(series, "userspace: %s (all reps)"
                                  % READER_TITLES[k], "op latency"))
    # Per mode: what userspace saw next to what the tool measured.
    kcol = {"fault": "#ff7f0e", "cmdline": "#9467bd", "writer": "#8c564b"}
    for m in modes:
        series = []
        for n, col in (("read_wait", "#1f77b4"), ("write_wait", "#17becf")):
            if m["hists"].get(n, {}).get("buckets"):
                series.append(("tool %s" % n, col, m["hists"][n]["buckets"]))
        for k in READER_KINDS:
            bk = {}
            for o in m["workload"]:
                for b in ((o.get("readers") or {}).get(k) or {}).get("buckets", []):
                    bk[b["le"]] = bk.get(b["le"], 0) + b["count"]
            if bk:
                series.append(("userspace %s" % k, kcol[k],
                               [{"le": a, "count": c} for a, c in bk.items()]))
        if len(series) > 1:
            P.append(plot_overlay(series, "%s: userspace op latency vs tool "
                                  "wait" % m["mode"], "latency"))
    P.append("</div>")
    head, rows = md_to_rows(md, "Userspace-measured latency")
    P.append(h_table(head, rows) if head else "<p>No workload data.</p>")

    head, rows = md_to_rows(md, "stress-ng metrics")
    if head:
        P.append("<h2>stress-ng metrics</h2>")
        P.append(h_table(head, rows))
    P.append("<h2>Status</h2>")
    head, rows = md_to_rows(md, "Status")
    P.append(h_table(head, rows))
    P.append("<h2>Histograms (text, bcc-style)</h2>")
    text = md.split("## Histograms (bcc-style)", 1)[-1].split("## Status")[0]
    for block in text.split("### ")[1:]:
        title, _, body = block.partition("\n")
        P.append("<h3>%s</h3><pre>%s</pre>" % (
            e(title), e(body.replace("```", "").strip("\n"))))
    P.append("<p>Files: <code>summary.md</code>, <code>trace.json</code> "
             "(open in ui.perfetto.dev or chrome://tracing), "
             "<code>raw/</code>.</p></body></html>")
    return "\n".join(P)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    out = argv[1]
    raw = argv[3] if len(argv) > 3 and argv[2] == "--raw" else \
        os.path.join(out, "raw")
    if not os.path.isdir(raw):
        print("render_report: no raw data in %s (run scripts/experiment "
              "first)" % raw, file=sys.stderr)
        return 2
    meta, host, modes = load_all(raw)
    md = summary_md(meta, host, modes)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(md)
    with open(os.path.join(out, "trace.json"), "w") as f:
        json.dump(chrome_trace(modes), f)
    with open(os.path.join(out, "index.html"), "w") as f:
        f.write(index_html(meta, host, modes, md))
    return 1 if any(not m["ok"] for m in modes) or not modes \
        or meta["_errors"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
