"""Reads rly's output and checks every profile table (the lines from a
`kernel ... share ...` header to `total`): the shares of the rows before
`total` add up to 100% (each is rounded to 0.1%), the total row says 100%,
and the times add up to the total.  Prints one line per table."""
import re
import sys

tables, cur = [], None
for line in sys.stdin:
    if re.match(r"kernel\s+calls\s+time\s+share\s+GFLOP/s\s+GB/s", line):
        cur = []
        continue
    if cur is None:
        continue
    m = re.search(r"([\d.]+) ms\s+([\d.]+)%", line)
    if not m:
        sys.exit(f"not a profile row: {line!r}")
    row = (float(m.group(1)), float(m.group(2)))
    if line.startswith("total"):
        tables.append((cur, row))
        cur = None
    else:
        cur.append(row)
for rows, (total_ms, total_share) in tables:
    shares = sum(s for _, s in rows)
    ms = sum(t for t, _ in rows)
    ok = abs(shares - 100) <= 0.05 * len(rows) + 0.05 and total_share == 100.0
    ok = ok and abs(ms - total_ms) <= 0.0005 * len(rows) + 0.001
    print(f"table of {len(rows)} rows: shares {'add up' if ok else 'do NOT add up'}")
