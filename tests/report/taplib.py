"""taplib: TAP for the Python checks of tests/report/ (imported by them).

A check program lists its checks first, then runs them: the plan is the
length of that list, never what happened. A check is a function that
raises Fail (or any exception) with the expected and the actual value;
an exception in one check fails that check alone, so the program prints
every check of its plan whatever happens. Shell files run these programs
through tests/lib.sh's `subtest` (one check there; these lines indented).
"""
import sys


class Fail(Exception):
    pass


def want(cond, what, got, expected):
    """assert: COND, else fail with 'WHAT: got GOT, want EXPECTED'."""
    if not cond:
        raise Fail("%s: got %s, want %s" % (what, got, expected))


def eq(what, got, expected):
    want(got == expected, what, repr(got), repr(expected))


def run(checks):
    """checks: [(text, function)]; function returns an optional note that
    is appended to the ok line (the figures it saw). Exits 0 if all
    passed."""
    print("1..%d" % len(checks), flush=True)
    bad = 0
    for i, (text, fn) in enumerate(checks, 1):
        try:
            note = fn()
            line = "ok %d - %s%s" % (i, text, " (%s)" % note if note else "")
        except Fail as e:
            bad += 1
            line = "not ok %d - %s: %s" % (i, text, e)
        except Exception as e:  # a missing key, file, ...: this check fails
            bad += 1
            line = "not ok %d - %s: %s: %s" % (i, text, type(e).__name__, e)
        print(line.replace("\n", " ").replace("#", "\\#"), flush=True)
    sys.exit(1 if bad else 0)
