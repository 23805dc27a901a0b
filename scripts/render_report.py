#!/usr/bin/python3
"""render_report.py: turn the experiment's raw JSON into the mmlockscope report.

Usage: /usr/bin/python3 scripts/render_report.py OUTDIR [--raw RAWDIR]

Reads RAWDIR (default OUTDIR/raw): RAWDIR/kernels.json and one directory per
kernel, RAWDIR/<kernel>/ (what scripts/report writes: meta.json, host.json
and <mode>/ from scripts/experiment), or the one-kernel layout of a bare
scripts/experiment run (meta.json and <mode>/ in RAWDIR itself). Writes
  OUTDIR/index.html   self-contained page (inline SVG plots, no network)
  OUTDIR/summary.md   the same tables in text, with bcc-style histograms
  OUTDIR/trace.json   Chrome Trace Event format (Perfetto, chrome://tracing)
Every (kernel, mode) pair is a column of the tables and a line of the
plots; the page opens with a verdict, one sentence per pair.
Data flows one way: it reads JSON only, never tool text output.
Needs Debian's python3-matplotlib (run it with /usr/bin/python3).
Exit status: 0 if every kernel and mode ran cleanly, 1 if one failed (the
report shows it), 2 if RAWDIR does not exist.
"""
import html
import io
import json
import math
import os
import re
import shlex
import sys

MODES = ("exclusive", "downgrade", "section")
MODE_COLORS = {"exclusive": "#d62728", "downgrade": "#1f77b4",
               "section": "#2ca02c"}
# Columns of kernels without the mode sysctl (their own behaviour).
STOCK_COLORS = ("#9467bd", "#8c564b", "#e377c2", "#17becf")
HISTS = ("write_hold", "read_hold", "downgrade_write_phase",
         "downgrade_read_phase", "read_wait", "write_wait",
         "vma_fallback_wait", "vma_write_wait", "vma_write_lock")
HIST_TITLES = {
    "write_hold": "write-hold (mmap_lock held for write)",
    "read_hold": "read-hold (mmap_lock held for read)",
    "downgrade_write_phase": "downgraded holds: write phase",
    "downgrade_read_phase": "downgraded holds: read phase",
    "read_wait": "reader wait (blocked in mmap_read_lock)",
    "write_wait": "writer wait (blocked in mmap_write_lock)",
    "vma_fallback_wait": "page faults that fell back from the VMA lock: "
                         "mmap_lock wait",
    "vma_write_wait": "vma_start_write: waits for VMA readers",
    "vma_write_lock": "vma_start_write calls (entry to return)",
}
# Histograms of the per-VMA locks (only on kernels that have them).
VMA_HISTS = ("vma_fallback_wait", "vma_write_wait", "vma_write_lock")
READER_KINDS = ("fault", "cmdline", "writer")
READER_TITLES = {"fault": "page-fault threads", "cmdline": "ps-like /proc/PID/cmdline reader",
                 "writer": "mmap/mprotect/munmap writer"}
KERNEL_TITLES = {"lab": "lab (patched 6.1: vm.munmap_lock_mode)",
                 "patched": "patched (the lab kernel + PATCHES)"}


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
    # make report CMD=: one line per run of the command (scripts/experiment)
    runs, bad = load_jsonl(os.path.join(d, "runs.jsonl"))
    m["runs"] = [o for o in (runs or []) if "rep" in o]
    if bad:
        m["errors"].append("runs.jsonl: %d unparsable line(s)" % bad)
    ms, bad = load_jsonl(os.path.join(d, "mmlockstat.jsonl"))
    m["mmlockstat_present"] = ms is not None
    m["mmlockstat_objs"] = ms or []
    m["hists"] = merge_hists(ms or [])
    m["top_waits"] = [w for o in ms or [] for w in o.get("top_waits") or []]
    m["vma"] = merge_vma(ms or [])
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


def merge_vma(objs):
    """mmlockstat's "vma_locks" over its intervals (faults and fallbacks
    added), or None if the tool did not print it."""
    vs = [o["vma_locks"] for o in objs if isinstance(o.get("vma_locks"), dict)]
    if not vs:
        return None
    return {"available": any(v.get("available") for v in vs),
            "faults": sum(v.get("faults") or 0 for v in vs),
            "fallbacks": sum(v.get("fallbacks") or 0 for v in vs)}


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


def release_version(release):
    m = re.match(r"(\d+)\.(\d+)", release or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def load_kernel(rawdir, name):
    """One kernel's run: RAWDIR/<name> (or RAWDIR itself, name "")."""
    d = os.path.join(rawdir, name) if name else rawdir
    meta = load_json(os.path.join(d, "meta.json")) or {}
    host = load_json(os.path.join(d, "host.json")) or {}
    k = {"name": name, "meta": meta, "host": host, "errors": []}
    if host.get("error"):
        k["errors"].append(host["error"])
    elif not meta:
        k["errors"].append("no meta.json: the experiment did not start in "
                           "the guest")
    if host.get("guest_exit") not in (None, 0):
        k["errors"].append("the guest run exited with status %s%s (see "
                           "%s, console.log)" % (
                               host["guest_exit"], " (timeout)"
                               if host["guest_exit"] == 124 else "",
                               "logs/%s/experiment.log" % name if name
                               else "experiment.log"))
    modes = (meta.get("params") or {}).get("modes") or \
        [x for x in MODES if os.path.isdir(os.path.join(d, x))]
    k["stock"] = meta.get("mode_control") is False
    k["cols"] = [load_mode(d, x) for x in modes]
    vma = [m["vma"]["available"] for m in k["cols"] if m["vma"]]
    if vma:
        k["vma"] = any(vma)
    else:
        # The tool did not say (an older mmlockstat): per-VMA locks came
        # in 6.4, and Debian's kernels have CONFIG_PER_VMA_LOCK=y.
        v = release_version((meta.get("machine") or {}).get("kernel"))
        k["vma"] = bool(v and v >= (6, 4) and k["stock"])
    for m in k["cols"]:
        m["kernel"] = name
        m["stock"] = k["stock"]
        m["kvma"] = k["vma"]
        m["col"] = (name + "/" if name else "") + \
            ("stock" if k["stock"] else m["mode"])
    return k


def kernel_title(k):
    name = k["name"] or (k["meta"].get("machine") or {}).get("kernel", "?")
    if k["stock"]:
        return "%s (stock: downgrade%s)" % (
            name, " + per-VMA locks" if k["vma"] else "")
    return KERNEL_TITLES.get(k["name"], "%s (vm.munmap_lock_mode)" % name)


def load_all(rawdir):
    """The kernels of RAWDIR in column order, each with its columns."""
    kj = load_json(os.path.join(rawdir, "kernels.json"))
    if kj is None and (os.path.exists(os.path.join(rawdir, "meta.json")) or
                       any(os.path.isdir(os.path.join(rawdir, x))
                           for x in MODES)):
        return [load_kernel(rawdir, "")]  # one bare experiment run
    names = (kj or {}).get("kernels") or sorted(
        x for x in os.listdir(rawdir)
        if os.path.isdir(os.path.join(rawdir, x)))
    return [load_kernel(rawdir, x) for x in names]


def columns(kernels):
    return [m for k in kernels for m in k["cols"]]


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
    """series: [(label, color, buckets)] drawn as overlaid stairs; color
    is a color or a dict of line properties (col_style)."""
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
        sty = col if isinstance(col, dict) else {"color": col}
        ax.stairs(counts, edges, label="%s (n=%d)" % (lab, sum(counts)),
                  linewidth=1.6, fill=False, **sty)
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1)
    ax.xaxis.set_major_formatter(_dur_formatter())
    ax.set_xlabel(xlabel + " (log2 buckets)")
    ax.set_ylabel("count")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return svg_of(fig)


def plot_phases(cols):
    """Funcgraph-style bars per munmap call: write phase, read phase,
    unmap_region (log x so an 8 us write phase shows next to a 1 s zap)."""
    plt = _mpl()
    rows = []
    for m in cols:
        for i, c in enumerate(big_calls(m)):
            rows.append(("%s #%d" % (m["col"], i), m["col"], c))
    fig, ax = plt.subplots(figsize=(7.2, 0.9 + 0.42 * max(1, len(rows))))
    if not rows:
        ax.text(0.5, 0.5, "no munmapsnoop data", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
        return svg_of(fig)
    phases = (("write_hold_ns", "write phase", "#d62728"),
              ("read_hold_ns", "read phase", "#1f77b4"),
              ("unmap_region_ns", "unmap_region / zap", "#7f7f7f"),
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


def col_style(cols, m):
    """Line properties of a column: the lab kernel's modes in their
    colours, solid; other kernels dashed, a colour per stock column."""
    if not m["stock"]:
        return {"color": MODE_COLORS.get(m["mode"], "#7f7f7f"),
                "linestyle": "-" if m["kernel"] in ("", "lab") else "--"}
    stock = [x for x in cols if x["stock"]]
    return {"color": STOCK_COLORS[stock.index(m) % len(STOCK_COLORS)],
            "linestyle": "--"}


# ---------------------------------------------------------------- verdict

def who(w):
    """The task of a top_waits entry (or of its holder), in words."""
    comm, op = w.get("comm", "?"), w.get("op", "?")
    if comm == "mt-ps":
        return "the `ps` reader (mt-ps)"
    if op == "fault":
        return "a page fault of %s" % comm
    return "%s (%s)" % (comm, op)


def behind(w):
    """'WHO behind HOLDER' of a top_waits entry, through the writer queued
    between them when there was one (readers do not pass it)."""
    hd, q = w.get("holder"), w.get("queued_writer")
    via = " behind the queued writer %s" % who(q) if q else ""
    if not hd:
        return "%s%s, holder not recorded" % (who(w), via)
    return "%s%s%s behind %s's %s (%s phase)" % (
        who(w), via, ", itself" if q else "", hd.get("comm"), hd.get("op"),
        hd.get("phase"))


def longest_wait(m, kind):
    ws = [w for w in m["top_waits"] if w.get("type") == kind]
    return max(ws, key=lambda w: w.get("wait_ns", 0)) if ws else None


def fault_wait_text(m):
    """Did page faults wait on mmap_lock, and how long."""
    v, h = m["vma"], m["hists"]
    if v and v.get("available"):
        fb = h.get("vma_fallback_wait") or {}
        n = fb.get("count") or 0
        how = "%d faults took a VMA lock, %d fell back to mmap_lock" % (
            v["faults"], v["fallbacks"])
        if not n:
            return "page faults never waited on mmap_lock (%s)" % how
        return ("page faults waited on mmap_lock %d times, up to %s, after "
                "falling back from the VMA lock (%s)" % (
                    n, fmt_ns(fb.get("max")), how))
    if not m["mmlockstat_present"]:
        return None
    fw = [w for w in m["top_waits"] if w.get("op") == "fault"
          and w.get("type") == "read"]
    if fw:
        return "page faults waited up to %s on mmap_lock%s" % (
            fmt_ns(max(w["wait_ns"] for w in fw)), "" if m["kvma"] else
            " (no per-VMA locks: every fault takes it)")
    rw = h.get("read_wait") or {}
    if len([w for w in m["top_waits"] if w.get("type") == "read"]) >= \
            (rw.get("count") or 0):
        return "page faults never waited on mmap_lock"
    return "no page fault among the %d longest mmap_lock waits" % len(
        m["top_waits"])


def verdict(m):
    """One sentence for a column: its munmap, the longest reader wait and
    whom it waited behind, the page faults' waits; all from the JSON."""
    if not m["ok"] and not m["workload"] and not m["calls"]:
        return "FAILED, no data (see Failures)"
    parts = []
    # CMD=: every munmap of the command (big_calls() keeps the 8 longest)
    calls = [c for c in (m["calls"] if m["runs"] else big_calls(m))
             if c.get("op") == "munmap"]
    if calls:
        c = max(calls, key=lambda c: c.get("total_ns", 0))
        parts.append("%s of %s took %s (write-held %s, read-held %s), "
                     "blocking %s" % (
                         "the longest of %d munmap() calls" % len(calls)
                         if len(calls) > 1 else "its munmap() call",
                         fmt_bytes(c.get("len")),
                         fmt_ns(c.get("total_ns")),
                         fmt_ns(c.get("write_hold_ns")),
                         fmt_ns(c.get("read_hold_ns")),
                         "%d waiter%s for up to %s" % (
                             c["waiters"], "s" if c["waiters"] > 1 else "",
                             fmt_ns(c.get("max_wait_ns")))
                         if c.get("waiters") else "no waiter"))
    elif m["workload"]:
        o = max(m["workload"], key=lambda o: o["munmap_ns"])
        parts.append("the longest munmap() took %s in userspace (no "
                     "munmapsnoop data)" % fmt_ns(o["munmap_ns"]))
    w = longest_wait(m, "read")
    if w:
        parts.append("the longest mmap_lock reader wait was %s: %s" % (
            fmt_ns(w.get("wait_ns")), behind(w)))
        if not w.get("holder"):
            wh = max((x for x in m["top_waits"] if x.get("type") == "read"
                      and x.get("holder")), default=None,
                     key=lambda x: x.get("wait_ns", 0))
            if wh:
                parts.append("the longest behind a recorded holder was "
                             "%s: %s" % (fmt_ns(wh.get("wait_ns")),
                                         behind(wh)))
    elif m["mmlockstat_present"]:
        parts.append("no reader waited on mmap_lock")
    f = fault_wait_text(m)
    if f:
        parts.append(f)
    vw = m["hists"].get("vma_write_wait") or {}
    if vw.get("count"):
        parts.append("vma_start_write() waited %d times for VMA readers, up "
                     "to %s" % (vw["count"], fmt_ns(vw.get("max"))))
    if not m["ok"]:
        parts.append("the run FAILED (see Failures)")
    s = "; ".join(parts) or "no data"
    return s[0].upper() + s[1:] + "."


# ----------------------------------------------------------------- tables

def base_col(cols):
    """The column ratios are taken against: upstream's downgrade."""
    return next((m for m in cols if m["mode"] == "downgrade" and
                 not m["stock"]), None) or \
        next((m for m in cols if m["mode"] == "downgrade"), None)


def hist_rows(cols):
    """(histogram, stat, cells) for every histogram any column has."""
    names = [n for n in HISTS if any(n in m["hists"] for m in cols)]
    names += sorted({n for m in cols for n in m["hists"]} - set(HISTS))
    base = base_col(cols)
    rows = []
    for n in names:
        hs = [m["hists"].get(n) for m in cols]
        rows.append((n, "count", [h["count"] if h else "–" for h in hs]))
        for q in ("p50", "p99", "max"):
            rows.append((n, q, [fmt_ns(h.get(q)) if h else "–" for h in hs]))
        b = base["hists"].get(n) if base else None
        if b and len(cols) > 1:
            rows.append((n, "max vs %s (one sample)" % base["col"],
                         [fmt_ratio(h.get("max"), b.get("max")) if h
                          else "–" for h in hs]))
    return rows


def spread(vals):
    """A figure over runs: the median, and with 2+ runs (min–max, n)."""
    v = sorted(vals)
    if not v:
        return "–"
    if len(v) == 1:
        return fmt_ns(v[0])
    return "%s (%s–%s, n=%d)" % (fmt_ns(median(v)), fmt_ns(v[0]),
                                 fmt_ns(v[-1]), len(v))


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def change(before, after):
    """after against before, honestly: with 3+ runs on each side, ranges
    that overlap are "no difference"; else the ratio of the medians, marked
    when a side has fewer than 3 runs."""
    if not before or not after:
        return "–"
    mb, ma = median(before), median(after)
    r = fmt_ratio(ma, mb) if ma and mb else "to 0" if mb else \
        "from 0" if ma else "0 to 0"
    if len(before) >= 3 and len(after) >= 3:
        if max(before) >= min(after) and max(after) >= min(before):
            return "no difference (ranges overlap)"
        return "%s (ranges apart)" % r
    return "%s (n=%d/%d: too few runs to call)" % (r, len(before),
                                                   len(after))


def patch_rows(kernels):
    """PATCHES=: (mode, measure, lab, patched, change) for each mode run on
    both. The measured munmap calls (one per rep of munmap_test; with CMD=
    the command's longest) per run, and the mmlockstat histograms, pooled
    over all runs of the mode (no per-run spread: one sample each)."""
    by = {k["name"]: k for k in kernels}
    if "lab" not in by or "patched" not in by:
        return []
    rows = []
    for mb in by["lab"]["cols"]:
        ma = next((m for m in by["patched"]["cols"]
                   if m["mode"] == mb["mode"]), None)
        if not ma:
            continue
        cb = [c for c in big_calls(mb) if c.get("op") == "munmap"]
        ca = [c for c in big_calls(ma) if c.get("op") == "munmap"]
        for key, lab in (("total_ns", "total"),
                         ("write_hold_ns", "write hold"),
                         ("read_hold_ns", "read hold")):
            b = [c.get(key) or 0 for c in cb]
            a = [c.get(key) or 0 for c in ca]
            rows.append((mb["mode"], "munmap %s, per call" % lab, spread(b),
                         spread(a), change(b, a)))
        for n in HISTS:
            hb, ha = mb["hists"].get(n), ma["hists"].get(n)
            if not hb and not ha:
                continue
            for q in ("p50", "p99", "max"):
                vb = (hb or {}).get(q)
                va = (ha or {}).get(q)
                rows.append((mb["mode"], "%s %s (pooled)" % (n, q),
                             fmt_ns(vb), fmt_ns(va),
                             "%s (one sample)" % fmt_ratio(va, vb)
                             if vb and va else "–"))
    return rows


CALL_ROWS = (("total", "total_ns"), ("write hold", "write_hold_ns"),
             ("read hold", "read_hold_ns"),
             ("unmap_region", "unmap_region_ns"), ("downgraded", None),
             ("call mode", "mode"), ("sections", "sections"),
             ("lock drops", "lock_drops"), ("waiters", "waiters"),
             ("wait (sum)", "wait_ns"), ("longest waiter", "max_wait_ns"))


def call_rows(cols):
    per = [big_calls(m) for m in cols]
    rows = []
    for i in range(max([len(p) for p in per] or [0])):
        for lab, key in CALL_ROWS:
            cells = []
            for p in per:
                c = p[i] if i < len(p) else None
                if c is None:
                    cells.append("–")
                elif key is None:
                    cells.append({True: "yes", False: "no"}.get(
                        c.get("downgraded"), c.get("downgraded")))
                elif key.endswith("_ns"):
                    cells.append(fmt_ns(c.get(key)))
                else:
                    cells.append(c.get(key))
            rows.append(("#%d" % i, lab, cells))
    return rows


def user_rows(cols):
    """Per rep what userspace saw, then the tool's waits of the run."""
    kinds = [k for k in READER_KINDS if any(
        k in (o.get("readers") or {}) for m in cols for o in m["workload"])]
    if not any(m["workload"] for m in cols):
        return []
    reps = sorted({o["rep"] for m in cols for o in m["workload"]})
    rows = []
    for r in reps:
        os_ = [next((o for o in m["workload"] if o["rep"] == r), None)
               for m in cols]
        rows.append((r, "munmap", [fmt_ns(o["munmap_ns"]) if o else "–"
                                   for o in os_]))
        rows.append((r, "populate", [fmt_ns(o["populate_ns"]) if o else "–"
                                     for o in os_]))
        for k in kinds:
            rd = [((o or {}).get("readers") or {}).get(k) for o in os_]
            for lab, f in (("max", lambda x: fmt_ns(x["max"])),
                           ("overlap max",
                            lambda x: fmt_ns(x["overlap_max"])),
                           ("p99", lambda x: fmt_ns(x["p99"])),
                           ("ops", lambda x: x["count"])):
                rows.append((r, "%s %s" % (k, lab),
                             [f(x) if x else "–" for x in rd]))
    if reps:
        for n, q in (("read_wait", "max"), ("read_wait", "p99"),
                     ("write_wait", "max")):
            rows.append(("all", "tool %s %s" % (n, q),
                         [fmt_ns(m["hists"].get(n, {}).get(q)) for m in cols]))
    return rows


def run_rows(cols):
    """make report CMD=: a row per run of the command."""
    rows = []
    for m in cols:
        for r in m["runs"]:
            rd = (r.get("readers") or {}).get("cmdline") or {}
            ex = r.get("exit")
            rows.append((
                m["col"], r["rep"],
                "**TIMED OUT** (killed)" if r.get("timed_out") else
                "–" if ex is None else
                "**killed by signal %d**" % -ex if ex < 0 else
                str(ex) if ex == 0 else "**%d**" % ex,
                "%.1f s" % r["wall_s"] if "wall_s" in r else "–",
                ", ".join("%s %s" % (x.get("pid"), x.get("comm"))
                          for x in r.get("left_running") or []) or "none",
                rd.get("count", "–"), fmt_ns(rd.get("max")),
                fmt_ns(rd.get("p99"))))
    return rows


def vma_rows(cols):
    if not any(m["vma"] for m in cols):
        return []
    v = [m["vma"] for m in cols]
    return [("per-VMA locks", [("yes" if x["available"] else "no") if x
                               else "–" for x in v]),
            ("faults with a VMA lock", [x["faults"] if x and x["available"]
                                        else "–" for x in v]),
            ("fell back to mmap_lock", [x["fallbacks"] if x and
                                        x["available"] else "–"
                                        for x in v])]


# ------------------------------------------------------------- trace.json

def chrome_trace(cols):
    ev = []
    for pi, m in enumerate(cols, 1):
        ev.append({"ph": "M", "name": "process_name", "pid": pi, "tid": 0,
                   "args": {"name": "mode: %s" % m["col"]}})
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
        for r in m["runs"]:
            if "start_ns" not in r:
                continue
            tname(0, "command runs")
            ev.append({"ph": "X", "name": "command run %d" % r["rep"],
                       "cat": "workload", "pid": pi, "tid": 0,
                       "ts": r["start_ns"] / 1e3,
                       "dur": (r["end_ns"] - r["start_ns"]) / 1e3,
                       "args": {"cmd": r.get("cmd"), "exit": r.get("exit"),
                                "timed_out": r.get("timed_out")}})
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


def params_rows(kernels):
    """Parameters: a row per item, a column per kernel."""
    def per(f):
        return [f(k) for k in kernels]

    def mach(k):
        return k["meta"].get("machine") or {}

    def par(k):
        return k["meta"].get("params") or {}
    rows = [
        ("kernel", per(lambda k: "%s (%s)" % (mach(k).get("kernel", "?"),
                                              mach(k).get("kernel_version",
                                                          "?"))
                       if k["meta"] else "–")),
        ("behaviour", per(kernel_title)),
        ("kernel source", per(lambda k: k["host"].get("kernel_source") or
                              "?")),
        ("series", per(lambda k: ", ".join(mach(k).get("series") or []) or
                       "(empty)" if not k["stock"] else
                       "none (Debian's build)")),
        ("machine", per(lambda k: "%s CPUs, %s MiB, %s" % (
            mach(k).get("cpus"), mach(k).get("mem_mb"),
            mach(k).get("cpu_model", "?")) if k["meta"] else "–")),
        ("THP", per(lambda k: mach(k).get("thp", "–"))),
        ("workload", per(lambda k: "`sh -c %s` in its own cgroup, %s reps, "
                         "timeout %g s, cmdline reader %s" % (
                             shlex.quote(par(k)["cmd"]).replace("|", "\\|"),
                             par(k).get("reps"), par(k).get("timeout_s") or 0,
                             "on" if par(k).get("cmdline_reader") else "off")
                         if par(k).get("cmd") else
                         "%s, size %s MiB, %s reps, %s fault "
                         "threads, cmdline reader %s, writer %s" % (
                             par(k).get("workload"), par(k).get("size_mb"),
                             par(k).get("reps"), par(k).get("fault_threads"),
                             "on" if par(k).get("cmdline_reader") else "off",
                             "on" if par(k).get("writer") else "off")
                         if par(k) else "–")),
        ("modes", per(lambda k: "%s (requested: %s); section size %s MiB" % (
            " ".join(par(k).get("modes") or []),
            " ".join(par(k).get("modes_requested") or []),
            par(k).get("section_mb")) if par(k) else "–")),
        ("tools", per(lambda k: " ".join(par(k).get("tools") or []) or
                      "none")),
        ("started", per(lambda k: "%s, finished %s" % (
            k["meta"].get("started", "?"), k["meta"].get("finished", "?"))
            if k["meta"] else "–")),
    ]
    keys = sorted({x for k in kernels for x in k["host"]} -
                  {"kernel", "kernel_source", "error"})
    for x in keys:
        rows.append(("host " + x.replace("_", " "),
                     per(lambda k: k["host"].get(x, "–"))))
    return [(a,) + tuple(b) for a, b in rows]


def failures(kernels):
    """(who, error) of every failure: kernels, then their modes."""
    out = []
    for k in kernels:
        for e in k["errors"]:
            out.append((k["name"] or "kernel", e))
        if not k["cols"] and not k["errors"]:
            out.append((k["name"] or "kernel", "no mode was run (no raw "
                        "data)"))
        for m in k["cols"]:
            if not m["ok"]:
                for e in m["errors"] or ["status not ok"]:
                    out.append((m["col"], e))
    return out


def summary_md(kernels):
    cols = columns(kernels)
    heads = [m["col"] for m in cols]
    L = ["# mmlockscope report", ""]
    L += ["## Verdict", ""]
    for k in kernels:
        if not k["cols"]:
            L.append("- **%s**: FAILED, not run: %s" % (
                k["name"] or "kernel", "; ".join(k["errors"]) or "no data"))
        for m in k["cols"]:
            L.append("- **%s**: %s" % (m["col"], verdict(m)))
    if not kernels:
        L.append("- no kernel was run (no raw data)")
    L.append("")
    for k in kernels:
        if k["meta"].get("note"):
            L += ["> **Note (%s):** %s" % (k["name"] or "kernel",
                                          k["meta"]["note"]), ""]
    fl = failures(kernels)
    if fl or not kernels:
        L += ["## Failures", ""]
        if not kernels:
            L.append("- no kernel was run (no raw data)")
        L += ["- **%s**: %s" % f for f in fl]
        L.append("")
    L += ["## Columns", "", md_table(
        ["column", "kernel", "mode"],
        [(m["col"], kernel_title(k), "its own (no vm.munmap_lock_mode)"
          if m["stock"] else "vm.munmap_lock_mode=" + m["mode"])
         for k in kernels for m in k["cols"]]), ""]
    L += ["## Parameters", "", md_table(
        [""] + [k["name"] for k in kernels], params_rows(kernels)), ""]
    base = base_col(cols)
    L += ["## Lock hold and wait (mmlockstat)", ""]
    if base and len(cols) > 1:
        L += ["Ratios are against `%s` (the upstream behaviour). A max "
              "is one event, so its ratio is one sample, not a measured "
              "difference; the spread across runs is in the munmap calls "
              "table (a call per run) and, with PATCHES=, the patch "
              "comparison." % base["col"], ""]
    rows = [(n, q) + tuple(c) for n, q, c in hist_rows(cols)]
    L.append(md_table(["histogram", "stat"] + heads, rows)
             if rows else "_no mmlockstat data_")
    L.append("")
    rows = vma_rows(cols)
    if rows:
        L += ["## Per-VMA locks (mmlockstat)", "",
              "Page faults that took a VMA lock never touch mmap_lock; the "
              "ones that fell back wait on it like any reader.", "",
              md_table([""] + heads, [(a,) + tuple(b) for a, b in rows]),
              ""]
    rows = patch_rows(kernels)
    if rows:
        L += ["## Patch comparison (lab → patched)", "",
              "The lab kernel without and with PATCHES, mode by mode. "
              "\"per call\": the measured munmap calls (one per run; with "
              "CMD= the command's longest), as the median (min–max, n). "
              "With 3 or more runs on each side, ranges that overlap are "
              "marked \"no difference\", else the ratio of the medians is "
              "given; with fewer runs the ratio is marked as too few to "
              "call. \"pooled\": the histogram over all runs of the mode, "
              "one figure per kernel, so its ratio is one sample.", "",
              md_table(["mode", "measure", "lab", "patched", "change"],
                       rows), ""]
    L += ["## munmap calls (munmapsnoop)", ""]
    rows = [(i, lab) + tuple(c) for i, lab, c in call_rows(cols)]
    L.append(md_table(["call", "measure"] + heads, rows) if rows else
             "_no munmapsnoop data_")
    L.append("")
    rows = [(r, lab) + tuple(c) for r, lab, c in user_rows(cols)]
    if rows or not any(m["runs"] for m in cols):
        L += ["## Userspace-measured latency (munmap_test) vs the tool", "",
              "`max` is the longest op in the rep; `overlap max` the "
              "longest op that overlapped the munmap() call. The tool's "
              "read_wait/write_wait (rep `all`) cover the whole run of the "
              "column.", ""]
        L.append(md_table(["rep", "measure"] + heads, rows) if rows else
                 "_no workload data_")
        L.append("")
    rows = run_rows(cols)
    if rows:
        L += ["## Command runs", "",
              "Each run of the command (`make report CMD=`): its wall time "
              "and exit status, the munmap/brk/mremap calls munmapsnoop "
              "saw in its cgroup (all runs of the column), and the ps-like "
              "reader's /proc/PID/cmdline reads of its processes.", "",
              md_table(["column", "rep", "exit", "wall", "left running",
                        "cmdline reads", "read max", "read p99"], rows), ""]
    srows = [(m["col"], x["rep"], x.get("stressor"), x.get("bogo-ops"),
              x.get("bogo-ops-per-second-real-time"),
              x.get("wall-clock-time"), x.get("system-time"))
             for m in cols for x in m["stress_metrics"]]
    if srows:
        L += ["## stress-ng metrics", "", md_table(
            ["column", "rep", "stressor", "bogo ops", "bogo ops/s (real)",
             "wall s", "system s"], srows), ""]
    L += ["## Histograms (bcc-style)", ""]
    for n in HISTS:
        for m in cols:
            h = m["hists"].get(n)
            if h:
                L += ["### %s — %s" % (n, m["col"]), "", "```",
                      text_hist(h), "```", ""]
    for kd in READER_KINDS:
        for m in cols:
            for o in m["workload"] + m["runs"]:
                r = (o.get("readers") or {}).get(kd)
                if r:
                    L += ["### userspace %s latency — %s rep %d"
                          % (kd, m["col"], o["rep"]), "", "```",
                          text_hist(r), "```", ""]
    st = []
    for k in kernels:
        if not k["cols"]:
            st.append((k["name"] or "kernel", "**FAILED**", "–",
                       "; ".join(k["errors"]) or "no data"))
        for m in k["cols"]:
            st.append((m["col"], "yes" if m["ok"] else "**FAILED**",
                       "%s s" % m["status"].get("wall_s", "?"),
                       "; ".join(m["errors"]) or "–"))
    L += ["## Status", "", md_table(["column", "ok", "wall", "errors"], st),
          ""]
    return "\n".join(L)


# ------------------------------------------------------------- index.html

CSS = """
body{font-family:sans-serif;margin:1.5em auto;max-width:1100px;color:#222}
h1{font-size:1.5em} h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.85em;display:block;overflow-x:auto}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;white-space:nowrap}
td:first-child,th:first-child{text-align:left}
table.kv td,table.wrap td{text-align:left;white-space:normal}
table.kv th,table.wrap th{text-align:left} table.kv td:first-child{white-space:nowrap}
h3{font-size:.95em;margin:.8em 0 .2em}
.fail{background:#fdd;border:1px solid #d33;padding:.5em 1em}
.note{background:#ffd;border:1px solid #cc3;padding:.5em 1em}
.plots{display:flex;flex-wrap:wrap;gap:8px} .plots svg{max-width:100%;height:auto}
ul.verdict li{margin:.3em 0} ul.verdict code{background:#f0f0f0}
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


def section_text(md, heading):
    """The first paragraph under '## heading' of summary.md."""
    sec = md.split("## " + heading, 1)[-1].split("\n\n")
    return sec[1].strip() if len(sec) > 1 else ""


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


def md_section(md, heading):
    sec = md.split("## " + heading, 1)
    return sec[1].split("\n## ", 1)[0] if len(sec) > 1 else ""


def index_html(kernels, md):
    e = html.escape
    cols = columns(kernels)
    P = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
         "<title>mmlockscope report</title><style>%s</style></head><body>"
         % CSS, "<h1>mmlockscope: munmap and mmap_lock</h1>"]
    P.append("<h2>Verdict</h2><ul class='verdict'>")
    for line in md_section(md, "Verdict").splitlines():
        mm = re.match(r"- \*\*(.*?)\*\*: (.*)$", line)
        if mm:
            P.append("<li><b>%s</b>: %s</li>" % (
                e(mm.group(1)), re.sub(r"`([^`]*)`", r"<code>\1</code>",
                                       e(mm.group(2)))))
    P.append("</ul>")
    for k in kernels:
        if k["meta"].get("note"):
            P.append("<p class='note'>%s: %s</p>" % (
                e(k["name"] or "kernel"), e(k["meta"]["note"])))
    fl = failures(kernels)
    if fl or not kernels:
        P.append("<div class='fail'><b>Failed runs</b><ul>")
        if not kernels:
            P.append("<li>no kernel was run (no raw data)</li>")
        for w, err in fl:
            P.append("<li><b>%s</b>: %s</li>" % (e(w), e(err)))
        P.append("</ul>Logs: <code>raw/&lt;kernel&gt;/&lt;mode&gt;/*.err"
                 "</code>, <code>logs/&lt;kernel&gt;/experiment.log</code>."
                 "</div>")
    for title, heading, cls in (
            ("Columns", "Columns", "wrap"),
            ("Parameters", "Parameters", "kv")):
        head, rows = md_to_rows(md, heading)
        if head:
            P.append("<h2>%s</h2>" % title)
            P.append(h_table(head, rows, cls))
    head, rows = md_to_rows(md, "Patch comparison")
    if head:  # PATCHES=: what the patch changed, first
        P.append("<h2>Patch comparison (lab → patched)</h2>")
        P.append("<p>%s</p>" % e(section_text(md, "Patch comparison")))
        P.append(h_table(head, rows, "wrap"))

    P.append("<h2>Lock hold and wait (mmlockstat)</h2><div class='plots'>")
    for n in HISTS:
        series = [(m["col"], col_style(cols, m), m["hists"][n]["buckets"])
                  for m in cols if m["hists"].get(n, {}).get("buckets")]
        if series:
            P.append(plot_overlay(series, HIST_TITLES[n]))
        elif n in ("write_hold", "read_hold", "read_wait") or \
                any(n in m["hists"] for m in cols):
            P.append("<p>No data for %s.</p>" % e(HIST_TITLES[n]))
    P.append("</div>")
    head, rows = md_to_rows(md, "Lock hold and wait (mmlockstat)")
    P.append(h_table(head, rows) if head else "<p>No mmlockstat data.</p>")
    head, rows = md_to_rows(md, "Per-VMA locks (mmlockstat)")
    if head:
        P.append("<h2>Per-VMA locks (mmlockstat)</h2>")
        P.append("<p>Page faults that took a VMA lock never touch "
                 "mmap_lock; the ones that fell back wait on it like any "
                 "reader.</p>")
        P.append(h_table(head, rows))

    P.append("<h2>munmap phases per call (munmapsnoop)</h2>")
    P.append("<p>Like the function_graph trace in dd2283f2605e: how much of "
             "each munmap ran under the write lock, how much under the read "
             "lock, and the time in <code>unmap_region()</code> (on 6.12 "
             "the zap, <code>vms_clear_ptes()</code>).</p>")
    if any(big_calls(m) for m in cols):
        P.append("<div class='plots'>%s</div>" % plot_phases(cols))
    head, rows = md_to_rows(md, "munmap calls (munmapsnoop)")
    P.append(h_table(head, rows) if head else "<p>No munmapsnoop data.</p>")

    P.append("<h2>Userspace-measured latency vs the tool</h2><div class='plots'>")
    for kd in READER_KINDS:
        series = [(m["col"], col_style(cols, m), reader_buckets(m, kd))
                  for m in cols if reader_buckets(m, kd)]
        if series:
            P.append(plot_overlay(series, "userspace: %s (all reps)"
                                  % READER_TITLES[kd], "op latency"))
    # Per column: what userspace saw next to what the tool measured.
    kcol = {"fault": "#ff7f0e", "cmdline": "#9467bd", "writer": "#8c564b"}
    for m in cols:
        series = []
        for n, c in (("read_wait", "#1f77b4"), ("write_wait", "#17becf"),
                     ("vma_fallback_wait", "#2ca02c")):
            if m["hists"].get(n, {}).get("buckets"):
                series.append(("tool %s" % n, c, m["hists"][n]["buckets"]))
        for kd in READER_KINDS:
            if reader_buckets(m, kd):
                series.append(("userspace %s" % kd, kcol[kd],
                               reader_buckets(m, kd)))
        if len(series) > 1:
            P.append(plot_overlay(series, "%s: userspace op latency vs tool "
                                  "wait" % m["col"], "latency"))
    P.append("</div>")
    head, rows = md_to_rows(md, "Userspace-measured latency")
    if head or not any(m["runs"] for m in cols):
        P.append(h_table(head, rows) if head else "<p>No workload data.</p>")

    head, rows = md_to_rows(md, "Command runs")
    if head:
        P.append("<h2>Command runs</h2>")
        P.append(h_table(head, rows))
    head, rows = md_to_rows(md, "stress-ng metrics")
    if head:
        P.append("<h2>stress-ng metrics</h2>")
        P.append(h_table(head, rows))
    P.append("<h2>Status</h2>")
    head, rows = md_to_rows(md, "Status")
    P.append(h_table(head, rows, "wrap"))
    P.append("<h2>Histograms (text, bcc-style)</h2>")
    text = md.split("## Histograms (bcc-style)", 1)[-1].split("## Status")[0]
    for block in text.split("### ")[1:]:
        title, _, body = block.partition("\n")
        P.append("<h3>%s</h3><pre>%s</pre>" % (
            e(title), e(body.replace("```", "").strip("\n"))))
    P.append("<p>Files: <code>summary.md</code>, <code>trace.json</code> "
             "(open in ui.perfetto.dev or chrome://tracing), "
             "<code>raw/</code>, <code>logs/</code>.</p></body></html>")
    return "\n".join(P)


def reader_buckets(m, kind):
    """A userspace reader kind's buckets over all reps of a column."""
    bk = {}
    for o in m["workload"] + m["runs"]:
        for b in ((o.get("readers") or {}).get(kind) or {}).get("buckets",
                                                                []):
            bk[b["le"]] = bk.get(b["le"], 0) + b["count"]
    return [{"le": a, "count": c} for a, c in sorted(bk.items())]


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    out = argv[1]
    raw = argv[3] if len(argv) > 3 and argv[2] == "--raw" else \
        os.path.join(out, "raw")
    if not os.path.isdir(raw):
        print("render_report: no raw data in %s (run scripts/report, or "
              "scripts/experiment RAWDIR, first)" % raw, file=sys.stderr)
        return 2
    kernels = load_all(raw)
    md = summary_md(kernels)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(md)
    with open(os.path.join(out, "trace.json"), "w") as f:
        json.dump(chrome_trace(columns(kernels)), f)
    with open(os.path.join(out, "index.html"), "w") as f:
        f.write(index_html(kernels, md))
    return 1 if failures(kernels) or not kernels else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
