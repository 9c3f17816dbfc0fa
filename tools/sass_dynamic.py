#!/usr/bin/env python3
"""Dynamic instruction count of one thread's path through a kernel, from its SASS: address ranges
of the disassembly, each weighted by how many times the path runs it (read the ranges off
`cuobjdump -sass`, e.g. a loop body x its trip count, a branch's arm x 0 or 1).

usage: sass_dynamic.py KERNEL.cubin --kernel NAME [--seg START:END:TIMES ...] [--rest TIMES]
  --seg   hex addresses (inclusive) and a weight, repeatable; overlapping segments both count
  --rest  weight of every instruction in no segment (default 0)
Prints ALU, FMA-pipe slots (IMAD.WIDE / .HI count twice) and all issued instructions of the path,
and the registers (cuobjdump -res-usage). Pipes as tools/sass_count.py assigns them.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_count  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cubin")
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--seg", action="append", default=[])
    ap.add_argument("--rest", type=float, default=0.0)
    args = ap.parse_args()
    kernels = sass_count.parse(sass_count.disassemble(args.cubin))
    name = next((k for k in kernels if k == args.kernel), None) or next(k for k in kernels if args.kernel in k)
    segs = []
    for s in args.seg:
        a, b, w = s.split(":")
        segs.append((int(a, 16), int(b, 16), float(w)))
    alu = fma = issued = 0.0
    for address, op, mods, _ in kernels[name]:
        if op == "NOP":
            continue
        weight = sum(w for a, b, w in segs if a <= address <= b)
        if not any(a <= address <= b for a, b, _ in segs):
            weight = args.rest
        pipe = sass_count.pipe_of(op, mods)
        issued += weight
        if pipe == "alu":
            alu += weight
        elif pipe == "fma":
            fma += weight
        elif pipe == "fma_wide":
            fma += 2 * weight
    regs = ""
    try:
        out = subprocess.run(["cuobjdump", "-res-usage", args.cubin], capture_output=True, text=True).stdout
        m = re.search(r"Function " + re.escape(name) + r":\s*\n\s*REG:(\d+)", out)
        regs = f", {m.group(1)} registers" if m else ""
    except OSError:
        pass
    print(f"{name}: ALU {alu:.0f}, FMA slots {fma:.0f}, issued {issued:.0f}{regs}")


if __name__ == "__main__":
    main()
