#!/usr/bin/env python3
"""Where a kernel's warps wait, by region of its SASS: Nsight Compute's warp-stall samples per
instruction, summed by reason over the whole kernel and over each region: every loop (a backward
branch's target up to the branch) and the straight-line code before, between and after them.

A region's share of the samples is its share of the warps' time; its reasons say what held them
there (no_instruction: instruction-cache misses; long_scoreboard: global or local memory; wait:
fixed-latency dependencies; math: a busy pipe; selected: issuing, the useful part).

usage: ncu_stalls.py SOURCE.csv [--top N]
  SOURCE.csv  `ncu -i REPORT.ncu-rep --page source --csv --print-source sass > SOURCE.csv`
              (collected with the SourceCounters section, e.g. --set full); one kernel
  --top N     reasons listed per region (default 5)
  --min-share P  regions with fewer than P percent of the samples are left out (default 0.1)
"""
import argparse
import collections
import csv
import re
import sys


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header_at = next((i for i, r in enumerate(rows) if r and r[0] == "Address"), None)
    if header_at is None:
        sys.exit(f"{path}: no 'Address' header: not a --page source --csv export")
    header, data = rows[header_at], [r for r in rows[header_at + 1:] if r and r[0].startswith("0x")]
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    if not reasons:
        sys.exit(f"{path}: no stall_* columns: collect with the SourceCounters section")
    column = {h: header.index(h) for h in reasons}
    source = header.index("Source")

    def number(text):
        try:
            return float(text.replace(",", ""))
        except ValueError:
            return 0.0

    base = int(data[0][0], 16)
    instructions = []
    for r in data:
        offset = int(r[0], 16) - base
        samples = {h: number(r[column[h]]) for h in reasons}
        instructions.append((offset, r[source].strip(), samples))
    return instructions, base


def loops(instructions, base):
    """(start, end) offsets of each loop: a branch to an earlier address closes one (branch targets
    are addresses like the Address column's, so base is taken off them too)."""
    found = []
    for offset, text, _ in instructions:
        m = re.search(r"\bBRA\b[^;]*?(0x[0-9a-f]+)", text)
        if m is None:
            continue
        target = int(m.group(1), 16)
        target = target - base if target >= base else target
        if target < offset:
            found.append((target, offset))
    # Nested or overlapping loops: keep the outermost of each overlapping group.
    found.sort()
    merged = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument("--min-share", type=float, default=0.1)
    args = parser.parse_args()
    instructions, base = load(args.csv)
    spans = loops(instructions, base)
    regions = collections.OrderedDict()
    for offset, _, samples in instructions:
        name = None
        for i, (start, end) in enumerate(spans):
            if start <= offset <= end:
                name = f"loop {i} 0x{start:x}..0x{end:x}"
                break
        if name is None:
            before = sum(1 for start, _ in spans if start < offset)
            name = f"straight line after loop {before - 1}" if before else "straight line before any loop"
        regions.setdefault(name, collections.Counter()).update(samples)
    total = collections.Counter()
    for counter in regions.values():
        total.update(counter)
    all_samples = sum(total.values()) or 1.0

    def reasons_line(counter):
        n = sum(counter.values()) or 1.0
        return ", ".join(f"{h[len('stall_'):]} {100 * v / n:.0f}%" for h, v in counter.most_common(args.top) if v)

    print(f"{len(instructions)} instructions, {all_samples:.0f} stall samples, {len(spans)} loop(s)")
    print(f"whole kernel: {reasons_line(total)}")
    for name, counter in regions.items():
        share = 100 * sum(counter.values()) / all_samples
        if share < args.min_share:
            continue
        print(f"{share:5.1f}%  {name}: {reasons_line(counter)}")


if __name__ == "__main__":
    main()
