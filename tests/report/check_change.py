#!/usr/bin/python3
"""check_change.py: the rule of the "change" column of the report's patch
comparison (scripts/render_report.py spread() and change()), on made-up
runs. A ratio is never headlined from too few runs, and a difference
inside the run-to-run spread is "no difference". TAP, 6 checks."""
import importlib.machinery
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import eq, run  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
_loader = importlib.machinery.SourceFileLoader(
    "render_report", os.path.join(TOP, "scripts/render_report.py"))
_spec = importlib.util.spec_from_loader("render_report", _loader)
rr = importlib.util.module_from_spec(_spec)
_loader.exec_module(rr)
MS = 1000000


def apart():
    # the seeds' split: 180-190 ms under the write lock before, 0.4-0.5 ms after
    eq("3 runs each, ranges apart", rr.change([180 * MS, 185 * MS, 190 * MS],
                                              [400000, 450000, 500000]),
       "0.00x (ranges apart)")
    return "ratio of the medians"


def apart_up():
    eq("3 runs each, ranges apart, up", rr.change([10 * MS, 11 * MS, 12 * MS],
                                                  [20 * MS, 22 * MS, 21 * MS]),
       "1.91x (ranges apart)")


def overlap():
    # medians 10 ms and 12 ms, but the ranges 8-13 and 11-15 overlap
    eq("3 runs each, ranges overlap", rr.change([8 * MS, 10 * MS, 13 * MS],
                                                [11 * MS, 12 * MS, 15 * MS]),
       "no difference (ranges overlap)")


def few():
    eq("1 run against 3", rr.change([180 * MS], [1 * MS, 2 * MS, 3 * MS]),
       "0.01x (n=1/3: too few runs to call)")
    eq("2 runs each", rr.change([10 * MS, 12 * MS], [20 * MS, 24 * MS]),
       "2.00x (n=2/2: too few runs to call)")


def spread_text():
    eq("spread of 3 runs", rr.spread([12 * MS, 10 * MS, 11 * MS]),
       "11.00 ms (10.00 ms–12.00 ms, n=3)")
    eq("spread of 1 run", rr.spread([10 * MS]), "10.00 ms")


def empty():
    eq("no runs on a side", rr.change([], [10 * MS]), "–")
    eq("a phase that is gone", rr.change([1 * MS, 2 * MS, 3 * MS], [0, 0, 0]),
       "to 0 (ranges apart)")
    eq("zero on both sides", rr.change([0, 0, 0], [0, 0, 0]),
       "no difference (ranges overlap)")


run([
    ("change: 3+ runs whose ranges are apart give the ratio of the medians", apart),
    ("change: the same upwards", apart_up),
    ("change: 3+ runs whose ranges overlap are no difference, whatever the medians", overlap),
    ("change: fewer than 3 runs on a side are marked too few to call", few),
    ("spread: the median, then (min-max, n)", spread_text),
    ("change: a side without runs gives no figure; zeros are named", empty),
])
