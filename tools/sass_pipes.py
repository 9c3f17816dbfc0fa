#!/usr/bin/env python3
"""SASS instructions per hash of a mining kernel, by execution pipe, and the rate each pipe allows.

On sm_90 an SM issues one warp instruction per scheduler per clock (128 lanes/clk); the ALU pipe
(SHF, LOP3, IADD3, PRMT, ISETP, ...) and the FMA pipe (IMAD, ...) each run 64 lanes/clk. A
SHA-256 miner's hot loop is one hash per iteration, so its body's counts are per hash, and
    rate <= SMs * clock * min(64 / ALU, 64 / FMA, 128 / issued).
IMAD.HI / IMAD.WIDE are counted apart: whether they take one FMA-pipe slot or two on sm_90 is
for the GPU to say (the benchmark's variants measure it); both bounds are printed.

usage: sass_pipes.py CUBIN... [--sms 132] [--clock-ghz 1.98] [--per N]
Needs cuobjdump (with nvdisasm) on PATH, or $CUOBJDUMP.
"""
import argparse
import os
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_listing  # noqa: E402  (same folder: the one SASS reader)
from sass_count import ALU, FMA  # noqa: E402  (same folder: one table of which opcode runs on which pipe)

CONTROL = {"BRA", "EXIT", "BSSY", "BSYNC", "WARPSYNC", "NOP", "RET", "CALL", "JMP", "BAR", "YIELD"}


def pipe(op, mods):
    if op in FMA:
        return "fma_hi" if op == "IMAD" and (".HI" in mods or ".WIDE" in mods) else "fma"
    if op in ALU:
        return "alu"
    if op.startswith("U") or op in {"S2UR", "R2UR", "VOTEU"}:
        return "uniform"
    if op in CONTROL:
        return "control"
    if op.startswith(("LD", "ST", "ATOM", "RED")):
        return "memory"
    return "other"


def kernels(cubin):
    """{kernel: [(address, opcode, modifiers, operands)]}"""
    return {name: [(a, op, mods, operands) for a, _, op, mods, operands in code]
            for name, code in sass_listing.functions(sass_listing.disassemble(cubin, "sass_pipes")).items()}


def hot_loop(code):
    """The instructions of the longest loop (closed by a backward branch), or all of them."""
    best = None
    for address, op, _, operands in code:
        m = re.search(r"0x([0-9a-f]+)\s*$", operands) if op == "BRA" else None
        if m and int(m.group(1), 16) < address:
            span = (int(m.group(1), 16), address)
            if best is None or span[1] - span[0] > best[1] - best[0]:
                best = span
    if best is None:
        return code
    return [i for i in code if best[0] <= i[0] <= best[1]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cubins", nargs="+")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--clock-ghz", type=float, default=1.98)
    ap.add_argument("--per", type=float, default=1.0, help="hashes per loop iteration")
    args = ap.parse_args()
    lanes = args.sms * args.clock_ghz  # G-lanes per second per lane-per-clock
    print("| cubin: kernel | ALU | FMA | IMAD.HI | uniform | other | issued | ALU bound | "
          "bound, HI = 1 FMA slot | bound, HI = 2 | top ops |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for cubin in args.cubins:
        for name, code in kernels(cubin).items():
            loop = [i for i in hot_loop(code) if i[1] != "NOP"]
            pipes = Counter(pipe(op, mods) for _, op, mods, _ in loop)
            ops = Counter(op + (".HI" if op == "IMAD" and ".HI" in mods else "") for _, op, mods, _ in loop)
            per = {k: v / args.per for k, v in pipes.items()}
            alu, fma, hi = per.get("alu", 0), per.get("fma", 0), per.get("fma_hi", 0)
            issued = sum(per.values())
            other = issued - alu - fma - hi - per.get("uniform", 0)

            def bound(hi_slots):
                limits = [128 / issued] + ([64 / alu] if alu else []) + [64 / (fma + hi_slots * hi)]
                return lanes * min(limits)

            top = ", ".join(f"{k} {v / args.per:g}" for k, v in ops.most_common(5))
            print(f"| {os.path.basename(cubin)}: {name} | {alu:g} | {fma:g} | {hi:g} | {per.get('uniform', 0):g} | "
                  f"{other:g} | {issued:g} | {lanes * 64 / alu if alu else 0:.2f} GH/s | {bound(1):.2f} GH/s | "
                  f"{bound(2):.2f} GH/s | {top} |")


if __name__ == "__main__":
    main()
