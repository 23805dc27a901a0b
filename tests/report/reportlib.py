"""reportlib: reading a rendered report for the checks of tests/report/
(imported by them; independent of scripts/render_report.py on purpose).

A RUN names one (kernel, mode) pair of a report as its raw directory does:
"KERNEL/MODE" (raw/KERNEL/MODE, what scripts/report writes) or "MODE" (raw/MODE,
a bare scripts/experiment run). Its column in the tables is headed
"KERNEL/MODE", or "KERNEL/stock" when the kernel has no
vm.munmap_lock_mode (its meta.json says mode_control: false) -- without
"KERNEL/" in the one-kernel layout."""
import json
import os
import re

from taplib import Fail

UNITS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}
DUR = r"[0-9.]+ (?:ns|µs|ms|s)"


def jsonl(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def run_of(report, run):
    """(raw directory of RUN, its column heading)."""
    kernel, _, mode = run.rpartition("/")
    kdir = os.path.join(report, "raw", kernel) if kernel else \
        os.path.join(report, "raw")
    with open(os.path.join(kdir, "meta.json")) as f:
        meta = json.load(f)
    head = (kernel + "/" if kernel else "") + \
        ("stock" if meta.get("mode_control") is False else mode)
    return os.path.join(kdir, mode), head


def parse_dur(cell):
    """'29.43 ms' -> (value_ns, half of the last printed digit in ns)."""
    m = re.fullmatch(r"([0-9.]+) (ns|µs|ms|s)", cell.strip())
    if not m:
        return None, None
    num, unit = m.groups()
    dec = len(num.split(".")[1]) if "." in num else 0
    half = 0.5 * 10 ** -dec * UNITS[unit]
    if unit == "ns":
        half = 1  # printed truncated
    return float(num) * UNITS[unit], half


def dur_is(cell, want_ns):
    """CELL prints WANT_NS to its printed precision."""
    got, half = parse_dur(cell)
    return got is not None and abs(got - want_ns) <= half + 1e-9 * want_ns


def section(md, heading):
    sec = md.split("## " + heading, 1)
    if len(sec) < 2:
        raise Fail("summary.md has no section '## %s'" % heading)
    return sec[1].split("\n## ", 1)[0]


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split(" | ")]


def table(md, heading):
    """(header cells, rows of cells) of the table under '## heading'."""
    lines = [l for l in section(md, heading).splitlines()
             if l.startswith("|")]
    if len(lines) < 2:
        return [], []
    return cells(lines[0]), [cells(l) for l in lines[2:]]


def all_tables(md):
    """(section heading, header cells, number of rows) of every table."""
    out, heading, head, n = [], None, None, 0
    for line in md.splitlines() + [""]:
        if line.startswith("## "):
            heading = line[3:]
        if line.startswith("|"):
            if head is None:
                head, n = cells(line), -1
            n += 1
        elif head is not None:
            out.append((heading, head, n))
            head = None
    return out
