#!/usr/bin/python3
"""tamper_summary.py SUMMARY.md: change the last digit of the first
duration in the userspace latency table (a wrong renderer's off-by-a-bit
number) and print "MODE rep REP munmap OLD -> NEW", the row it changed, so
that the caller can check that check_summary.py names it."""
import re
import sys

path = sys.argv[1]
with open(path) as f:
    s = f.read()
i = s.index("## Userspace-measured latency")
row = re.compile(r"^\| (\w+) \| (\d+) \| (\d+)\.(\d\d) ms \|", re.M).search(s, i)
if not row:
    sys.exit("tamper_summary.py: no '| MODE | REP | N.NN ms |' row in %s" % path)
mode, rep, whole, dec = row.groups()
old = "%s.%s ms" % (whole, dec)
new = "%s.%s%d ms" % (whole, dec[0], (int(dec[1]) + 5) % 10)
start, end = row.span(3)[0], row.span(4)[1] + len(" ms")
with open(path, "w") as f:
    f.write(s[:start] + new + s[end:])
print("%s rep %s munmap %s -> %s" % (mode, rep, old, new))
