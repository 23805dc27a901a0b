#!/usr/bin/python3
"""tamper_summary.py SUMMARY.md: change the last digit of the first
duration in the userspace latency table (a wrong renderer's off-by-a-bit
number: the first column's munmap of the first rep) and print "COLUMN rep
REP munmap OLD -> NEW", the cell it changed, so that the caller can check
that check_summary.py names it."""
import re
import sys

path = sys.argv[1]
with open(path) as f:
    s = f.read()
i = s.index("## Userspace-measured latency")
head = re.compile(r"^\| rep \| measure \| ([^|]+) \|", re.M).search(s, i)
row = re.compile(r"^\| (\d+) \| munmap \| (\d+)\.(\d\d) ms \|", re.M).search(s, i)
if not head or not row:
    sys.exit("tamper_summary.py: no '| rep | measure | COLUMN |' table with a "
             "'| REP | munmap | N.NN ms |' row in %s" % path)
mode = head.group(1).strip()
rep, whole, dec = row.groups()
old = "%s.%s ms" % (whole, dec)
new = "%s.%s%d ms" % (whole, dec[0], (int(dec[1]) + 5) % 10)
start, end = row.span(2)[0], row.span(3)[1] + len(" ms")
with open(path, "w") as f:
    f.write(s[:start] + new + s[end:])
print("%s rep %s munmap %s -> %s" % (mode, rep, old, new))
