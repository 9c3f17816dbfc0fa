#!/usr/bin/env python3
"""Register-bank read cycles of each kernel in a cubin: the second limit of integer-bound kernels.

Model (fits the 2026-12-02 H200 SHA-256 runs to within 4%, in the right order, see
docs/perf-sha256.md): the register file has two banks (register number mod 2), each delivering
one register per clock to a scheduler. A warp instruction spends max(reads from bank 0, reads from
bank 1) clocks reading its sources; a register named twice is read once, and an operand that the
previous instruction marked .reuse in the same slot, a uniform register, a constant or an
immediate costs nothing. Per scheduler, one warp (32 hashes) then needs at least
    max(2 * ALU instructions, 2 * FMA slots, bank cycles, issued instructions)
clocks (the ALU and FMA pipes take two clocks per warp instruction; IMAD.HI/WIDE count as two FMA
slots, as sass_count.py counts them), so
    rate <= SMs * 4 * 32 * clock / that.

usage: sass_banks.py KERNEL.cubin [--per N] [--kernel NAME] [--sms 132] [--clock-ghz 1.98] [--json]
Instructions inside loops are counted once, as sass_count.py does; --per divides by hashes per
thread. Needs cuobjdump (with nvdisasm) on PATH or $CUOBJDUMP.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_count  # noqa: E402  (same folder: disassembly, parsing, pipe classes)

REGISTER = re.compile(r"^[-!~|]*(R\d+)(\.reuse)?")
NO_DESTINATION = {"STG", "ST", "STS", "STL", "RED", "BRA", "EXIT", "BAR", "ISETP", "FSETP", "PLOP3"}


def sources(op, operands):
    """The source operand strings of one instruction (the destination(s) dropped)."""
    parts = [p.strip() for p in operands.split(",")] if operands else []
    if op in NO_DESTINATION:
        return parts[2:] if op in ("ISETP", "FSETP", "PLOP3") else parts
    return parts[1:]


def bank_cycles(instructions):
    """Sum over instructions of max(reads per bank); also the reads and per-pipe counts."""
    total = reads = 0
    cached = {}  # operand slot -> register the previous instruction kept in the reuse cache
    for _, op, _, operands in instructions:
        if op == "NOP":
            continue
        banks = [0, 0]
        seen, kept = set(), {}
        for slot, text in enumerate(sources(op, operands)):
            m = REGISTER.match(text)
            if not m:
                continue
            register = m.group(1)
            if m.group(2):
                kept[slot] = register
            if cached.get(slot) == register or register in seen:
                continue
            seen.add(register)
            banks[int(register[1:]) % 2] += 1
            reads += 1
        cached = kept
        total += max(banks)
    return total, reads


def report(instructions, per, sms, clock_ghz):
    _, pipes = sass_count.count(instructions)
    cycles, reads = bank_cycles(instructions)
    alu = pipes["alu"] / per
    fma = (pipes["fma"] + 2 * pipes["fma_wide"]) / per
    issued = sum(pipes.values()) / per
    bank = cycles / per
    limits = {"alu": 2 * alu, "fma": 2 * fma, "bank": bank, "issue": issued}
    limiter = max(limits, key=limits.get)
    bound = limits[limiter]
    return {"alu_per_hash": alu, "fma_per_hash": fma, "issue_per_hash": issued, "bank_cycles_per_hash": bank,
            "reads_per_hash": reads / per, "limiter": limiter,
            "model_ghs": sms * 4 * 32 * clock_ghz / bound if bound else 0.0}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cubin")
    ap.add_argument("--per", type=float, default=1.0, help="divide counts by this (hashes per thread)")
    ap.add_argument("--kernel", help="only this kernel (substring)")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--clock-ghz", type=float, default=1.98)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    kernels = sass_count.parse(sass_count.disassemble(args.cubin))
    if not kernels:
        sys.exit(f"sass_banks: no kernel found in {args.cubin}")
    out = {}
    for name, instructions in kernels.items():
        if args.kernel and args.kernel not in name:
            continue
        entry = report(instructions, args.per, args.sms, args.clock_ghz)
        entry["loops"] = []
        for start, end in sass_count.loops(instructions):
            body = [i for i in instructions if start <= i[0] <= end]
            entry["loops"].append({"start": hex(start), "end": hex(end),
                                   **report(body, args.per, args.sms, args.clock_ghz)})
        out[name] = entry
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for name, e in out.items():
        print(f"{name}: per hash (/{args.per:g}) ALU {e['alu_per_hash']:.0f}, FMA slots {e['fma_per_hash']:.0f}, "
              f"bank cycles {e['bank_cycles_per_hash']:.0f} ({e['reads_per_hash']:.0f} reads), issued "
              f"{e['issue_per_hash']:.0f}; limited by {e['limiter']}: {e['model_ghs']:.2f} GH/s at {args.sms} SMs x "
              f"{args.clock_ghz:g} GHz")
        for loop in e["loops"]:
            print(f"  loop {loop['start']}..{loop['end']} (per iteration): ALU {loop['alu_per_hash']:.0f}, bank cycles "
                  f"{loop['bank_cycles_per_hash']:.0f}, issued {loop['issue_per_hash']:.0f}")


if __name__ == "__main__":
    main()
