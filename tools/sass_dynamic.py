#!/usr/bin/env python3
"""Dynamic instruction count of one thread's path through a kernel, from its SASS: address ranges
of the disassembly, each weighted by how many times the path runs it (read the ranges off
`cuobjdump -sass`, e.g. a loop body x its trip count, a branch's arm x 0 or 1).

usage: sass_dynamic.py KERNEL.cubin --kernel NAME [--seg START:END:TIMES ...] [--rest TIMES]
  --seg   hex addresses (inclusive) and a weight, repeatable; overlapping segments both count
  --rest  weight of every instruction in no segment (default 0)
  --whole-chunks  inside each BSSY..BSYNC region that holds both a 16-byte access (.128) and
          byte accesses (.U8: cipher_io.cuh's first / last chunk of a message), count only the
          arm with the 16-byte access: the path of a chunk in the middle of a message
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


def byte_arms(code):
    """Addresses of the byte-by-byte arms of chunk loads / stores (see --whole-chunks)."""
    skipped = set()
    for address, op, _, operands in code:
        if op != "BSSY":
            continue
        end = int(re.search(r"0x([0-9a-f]+)", operands).group(1), 16)
        region = [c for c in code if address < c[0] < end]
        wide = [c[0] for c in region if c[1] in ("LDG", "STG") and ".128" in c[2]]
        narrow = [c[0] for c in region if c[1] in ("LDG", "STG") and ".U8" in c[2]]
        if not wide or not narrow or any(c[1] == "BSSY" for c in region):
            continue  # not a chunk's two arms (or not the innermost region)
        # The branch that splits the region into a 16-byte arm and a byte arm.
        for branch in (c for c in region if c[1] == "BRA"):
            target = int(re.search(r"0x([0-9a-f]+)", branch[3]).group(1), 16)
            if not branch[0] < target <= end:
                continue
            if target >= end - 0x10:  # (the BSYNC or past it) a 16-byte access, then a branch past the byte arm that follows it
                arm1 = [c[0] for c in region if c[0] <= branch[0]]
                arm2 = [c[0] for c in region if c[0] > branch[0]]
            else:
                arm1 = [c[0] for c in region if branch[0] < c[0] < target]
                arm2 = [c[0] for c in region if c[0] >= target]
            w1, w2 = any(a in arm1 for a in wide), any(a in arm2 for a in wide)
            n1, n2 = any(a in arm1 for a in narrow), any(a in arm2 for a in narrow)
            if (w1 and not n1 and n2 and not w2) or (w2 and not n2 and n1 and not w1):
                skipped.update(arm2 if w1 else arm1)
                break
    return skipped


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cubin")
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--seg", action="append", default=[])
    ap.add_argument("--rest", type=float, default=0.0)
    ap.add_argument("--whole-chunks", action="store_true")
    args = ap.parse_args()
    kernels = sass_count.parse(sass_count.disassemble(args.cubin))
    name = next((k for k in kernels if k == args.kernel), None) or next(k for k in kernels if args.kernel in k)
    segs = []
    for s in args.seg:
        a, b, w = s.split(":")
        segs.append((int(a, 16), int(b, 16), float(w)))
    code = kernels[name]
    skipped = byte_arms(code) if args.whole_chunks else set()
    alu = fma = issued = 0.0
    for address, op, mods, _ in code:
        if op == "NOP" or address in skipped:
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
