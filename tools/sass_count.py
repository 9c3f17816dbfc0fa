#!/usr/bin/env python3
"""Counts the SASS instructions of each kernel in a cubin by execution pipe (ALU, FMA, memory, ...).

Integer-bound kernels such as SHA-256 are limited by the ALU pipe (SHF, LOP3, IADD3, PRMT, ...:
64 per SM per clock on sm_80/sm_90) while IMAD runs on the FMA pipe beside it, so the ALU count per
hash sets the speed limit: rate <= SMs * 64 * clock / alu_per_hash.

usage: sass_count.py KERNEL.cubin [--per N] [--kernel NAME] [--sms 132] [--clock-ghz 1.98] [--json]
  --per N    divide by N (hashes per thread, or blocks per thread) to print per-hash counts
  --range A:B  (hex addresses, repeatable) also count only the instructions in these ranges: the
             path one thread runs, read off the disassembly (e.g. the aligned path of a kernel
             that also holds byte-by-byte code for partial blocks)
Instructions inside loops (a backward branch) are reported per loop, since the static count of a
loop body runs once per iteration. Needs cuobjdump (CUDA toolkit) on PATH or $CUOBJDUMP, and the
nvdisasm it runs on PATH; where the toolkit lacks them, `pip download --no-deps
nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm` has both (nvidia/cu13/bin in the wheels).
"""
import argparse
import json
import os
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_listing  # noqa: E402  (same folder: the one SASS reader)

# Opcode (before the first '.') -> pipe. Variants that change pipe are handled in pipe_of().
# tools/sass_pipes.py and tools/sass_banks.py take ALU and FMA from here.
ALU = {"SHF", "SHL", "SHR", "LOP", "LOP3", "PLOP3", "IADD3", "IADD", "PRMT", "SEL", "FSEL", "ISETP", "FSETP",
       "LEA", "MOV", "IMNMX", "VIMNMX", "BMSK", "SGXT", "P2R", "R2P", "IABS", "FLO", "CS2R", "ICMP", "LEA_HI"}
# VIADD (sm_90's add of an immediate) issues to the FMA pipe: Nsight Compute on the H200 counts the
# 30 VIADDs of the 32-byte SHA-256 kernel in sm__inst_executed_pipe_fmaheavy, not in pipe_alu.
FMA = {"IMAD", "IMUL", "FFMA", "FADD", "FMUL", "HFMA2", "HADD2", "HMUL2", "IDP", "IDP4A", "VIADD"}
MEM = {"LDG", "STG", "LD", "ST", "LDS", "STS", "LDL", "STL", "LDC", "ATOM", "ATOMG", "ATOMS", "RED", "LDGSTS",
       "LDSM", "MEMBAR", "CCTL", "ERRBAR"}
CONTROL = {"BRA", "BRX", "JMP", "EXIT", "RET", "CALL", "BSSY", "BSYNC", "WARPSYNC", "BAR", "NOP", "YIELD", "BPT",
           "DEPBAR", "KILL", "NANOSLEEP", "ACQBULK", "ELECT"}
OTHER_PIPES = {"MUFU": "xu", "POPC": "xu", "BREV": "xu", "S2R": "xu", "S2UR": "uniform", "I2F": "xu", "F2I": "xu",
               "SHFL": "mem", "VOTE": "alu", "MATCH": "mem", "REDUX": "mem"}

BRANCH_TARGET = re.compile(r"\(\*\"?BRANCH_TARGETS?|0x([0-9a-f]+)")


def pipe_of(op, mods):
    if op.startswith("U") and op not in {"UMOV"} | ALU | FMA:
        return "uniform"
    if op == "UMOV":
        return "uniform"
    if op == "IMAD" and (".WIDE" in mods or ".HI" in mods):
        return "fma_wide"  # two FMA-pipe issue slots
    if op in ALU:
        return "alu"
    if op in FMA:
        return "fma"
    if op in MEM:
        return "mem"
    if op in CONTROL:
        return "control"
    return OTHER_PIPES.get(op, "other")


def disassemble(path):
    return sass_listing.disassemble(path, "sass_count")


def parse(text):
    """{kernel: [(address, opcode, modifiers, operands)]}"""
    return {name: [(a, op, mods, operands) for a, _, op, mods, operands in code]
            for name, code in sass_listing.functions(text).items()}


def loops(instructions):
    """[(start, end)] address ranges closed by a backward branch."""
    found = []
    for address, op, _, operands in instructions:
        if op in ("BRA", "JMP"):
            m = re.search(r"0x([0-9a-f]+)\s*$", operands)
            # A branch to itself is the trap loop ptxas places after EXIT, not a loop.
            if m and int(m.group(1), 16) < address:
                found.append((int(m.group(1), 16), address))
    return found


def count(instructions, start=None, end=None):
    ops, pipes = Counter(), Counter()
    for address, op, mods, _ in instructions:
        if start is not None and not (start <= address <= end):
            continue
        if op == "NOP":
            continue
        name = op + "".join(m for m in (".WIDE", ".HI") if op == "IMAD" and m in mods)
        ops[name] += 1
        pipes[pipe_of(op, mods)] += 1
    return ops, pipes


def summary(pipes, per, sms, clock_ghz):
    alu = pipes["alu"] / per
    fma = (pipes["fma"] + 2 * pipes["fma_wide"]) / per
    total = sum(pipes.values()) / per
    out = {"alu_per_hash": alu, "fma_per_hash": fma, "issue_per_hash": total}
    if alu > 0:
        out["alu_limit_ghs"] = sms * 64 * clock_ghz / alu
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cubin")
    ap.add_argument("--per", type=float, default=1.0, help="divide counts by this (hashes per thread)")
    ap.add_argument("--kernel", help="only this kernel (substring)")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--clock-ghz", type=float, default=1.98)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--range", action="append", default=[], help="START:END in hex (inclusive), repeatable")
    args = ap.parse_args()
    ranges = [tuple(int(x, 16) for x in r.split(":")) for r in args.range]

    kernels = parse(disassemble(args.cubin))
    if not kernels:
        sys.exit(f"sass_count: no kernel found in {args.cubin}")
    report = {}
    for name, instructions in kernels.items():
        if args.kernel and args.kernel not in name:
            continue
        ops, pipes = count(instructions)
        entry = {"ops": dict(ops.most_common()), "pipes": dict(pipes),
                 **summary(pipes, args.per, args.sms, args.clock_ghz), "loops": []}
        for start, end in loops(instructions):
            lops, lpipes = count(instructions, start, end)
            entry["loops"].append({"start": hex(start), "end": hex(end), "ops": dict(lops.most_common()),
                                   "pipes": dict(lpipes), **summary(lpipes, args.per, args.sms, args.clock_ghz)})
        if ranges:
            picked = [i for i in instructions if any(a <= i[0] <= b for a, b in ranges)]
            rops, rpipes = count(picked)
            entry["ranges"] = {"ranges": args.range, "ops": dict(rops.most_common()), "pipes": dict(rpipes),
                               **summary(rpipes, args.per, args.sms, args.clock_ghz)}
        report[name] = entry

    if args.json:
        print(json.dumps(report, indent=2))
        return
    for name, entry in report.items():
        print(f"{name}:")
        print("  pipes: " + ", ".join(f"{k}={v}" for k, v in sorted(entry["pipes"].items())))
        print("  ops:   " + ", ".join(f"{k}={v}" for k, v in entry["ops"].items()))
        print(f"  per hash (/{args.per:g}): ALU {entry['alu_per_hash']:.1f}, FMA {entry['fma_per_hash']:.1f}, "
              f"all issued {entry['issue_per_hash']:.1f}", end="")
        if "alu_limit_ghs" in entry:
            print(f"; ALU-pipe limit {entry['alu_limit_ghs']:.2f} GH/s at {args.sms} SMs x 64/clk x "
                  f"{args.clock_ghz:g} GHz")
        else:
            print()
        for loop in entry["loops"]:
            print(f"  loop {loop['start']}..{loop['end']} (per iteration): ALU {loop['alu_per_hash']:.1f}, "
                  f"FMA {loop['fma_per_hash']:.1f}, all {loop['issue_per_hash']:.1f}")
        if "ranges" in entry:
            r = entry["ranges"]
            print(f"  ranges {' '.join(r['ranges'])}: ALU {r['alu_per_hash']:.2f}, FMA {r['fma_per_hash']:.2f}, "
                  f"all {r['issue_per_hash']:.2f} (" + ", ".join(f"{k}={v}" for k, v in sorted(r["pipes"].items())) + ")")


if __name__ == "__main__":
    main()
