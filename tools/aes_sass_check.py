#!/usr/bin/env python3
"""Checks the SASS of the AES / GHASH kernels for the memory accesses a table lookup would need.

A lookup table indexed by secret data (T-tables, S-box tables, key-dependent GHASH tables) must
live in shared, local, constant or global memory and be read at an address computed from the
secret. The rules, for every kernel named aes_* in the cubin:
  1. no shared memory access at all (LDS, STS, ATOMS, LDSM), but in the kernels that stage their
     IO through it (STAGED: aes_ctr_batch, aes_setup_batch) and the tensor-core GHASH, which keeps
     its MMA operands there (aes_ghash_mma), whose every address and branch the taint analysis of
     ct_sass_check.py shows free of secret data (tests/unit/test_aes_sass.cpp runs both);
  2. no local memory access at all (LDL, STL: no spills, no runtime-indexed arrays);
  3. constant memory only at immediate addresses (no LDC / ULDC indexed by a register);
  4. in the AES round loop (the loop of aes_ctr / aes_ctr_masked / aes_ctr_batch with the most
     instructions):
     only loads (LDG), and the registers their addresses come from (followed through copies,
     additions and multiplications by constants) are written inside the loop by those only:
     induction variables (round key r's address) over values fixed before the loop. Every ALU result of the rounds
     (the state) comes from LOP3/SHF/PRMT, so no address in the rounds can depend on the state.
Rules 1-3 exclude every table but a global one; rule 4 excludes global tables from the rounds.
GHASH (aes_ghash) multiplies with integer multiplications and masks only: rules 1-3 hold there,
and its global loads are the message blocks, at addresses from the block index.

usage: aes_sass_check.py AES.cubin     exit 0: all rules hold; 1: a violation (listed); 2: no tool
Needs cuobjdump ($CUOBJDUMP, or on PATH).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_listing import disassemble, functions  # noqa: E402  (same folder: the one SASS reader)

BRANCH = re.compile(r"0x([0-9a-f]+)")
SHARED = {"LDS", "STS", "ATOMS", "LDSM", "LDGSTS"}
STAGED = {"aes_ctr_batch", "aes_setup_batch", "aes_ghash_mma"}
ROUND_LOOPS = {"aes_ctr", "aes_ctr_masked", "aes_ctr_batch"}
LOCAL = {"LDL", "STL"}
REGISTER = re.compile(r"\bR(\d+)\b")


def kernels(text):
    """{name: [(address, op, modifiers, operands)]}"""
    return {name: [(a, op, mods, operands) for a, _, op, mods, operands in code]
            for name, code in functions(text).items()}


def loops(code):
    """(start, end) of each backward branch's body."""
    found = []
    for addr, op, _, operands in code:
        if op == "BRA":
            t = BRANCH.search(operands)
            if t and int(t.group(1), 16) <= addr:
                found.append((int(t.group(1), 16), addr))
    return found


def address_registers(operands):
    m = re.search(r"\[(R\d+)(?:\.64)?[^\]]*\]", operands)
    if not m:
        return set()
    base = int(m.group(1)[1:])
    return {base, base + 1} if ".64" in operands.split("[", 1)[1].split("]")[0] else {base}


def check(cubin):
    problems, report = [], []
    for name, code in kernels(disassemble(cubin, "aes_sass_check")).items():
        if not name.startswith("aes_"):
            continue
        for addr, op, mods, operands in code:
            where = f"{name} @{addr:#x}: {op}{mods} {operands}"
            if op in SHARED and name not in STAGED:
                problems.append(f"shared memory access: {where}")
            if op in LOCAL:
                problems.append(f"local memory access: {where}")
            if op in {"LDC", "ULDC"} and re.search(r"c\[[^\]]*\]\s*\[\s*U?R\d", operands):
                problems.append(f"register-indexed constant load: {where}")
        if name in ROUND_LOOPS:
            body = max(loops(code), key=lambda l: sum(1 for a, *_ in code if l[0] <= a <= l[1]), default=None)
            if body is None:
                problems.append(f"{name}: no round loop found")
                continue
            inside = [c for c in code if body[0] <= c[0] <= body[1]]
            loads = [c for c in inside if c[1] == "LDG"]
            for addr, op, mods, operands in inside:
                if op in {"STG", "ST", "LD", "ATOM", "ATOMG", "RED"} or op in SHARED | LOCAL:
                    problems.append(f"{name} round loop: memory access other than a load: {op}{mods} {operands}")
            # Follow each load address back through the body (straight-line code, entered around the
            # back edge): the definitions it comes from must be additions or copies, ending in values
            # from before the loop or in constants.
            def dest(c):
                d = REGISTER.search(c[3].split(",")[0]) if c[3] else None
                return int(d.group(1)) if d and c[1] != "LDG" else None

            def reaching(reg, pos):
                defs = [c for c in inside if dest(c) == reg]
                before = [c for c in defs if c[0] < pos]
                return before[-1] if before else (defs[-1] if defs else None)

            def trace(reg, pos, seen):
                d = reaching(reg, pos)
                if d is None or (reg, d[0]) in seen:
                    return
                seen.add((reg, d[0]))
                _, wop, wmods, wops = d
                step = wop in {"IADD3", "VIADD", "IADD", "LEA"} or (wop == "IMAD" and ".X" in wmods)
                copy = wop == "MOV" or (wop == "IMAD" and ".MOV" in wmods)
                # A multiplication by a constant (IMAD / IMAD.SHL / IMAD.WIDE with an immediate
                # multiplier: round r's offset 16 r, scaled indices) is as public as its register
                # sources, which are traced in turn.
                sources = [x.strip() for x in wops.split(",")]
                scaled = wop == "IMAD" and len(sources) >= 3 and sources[2].startswith("0x")
                if not (step or copy or scaled):
                    problems.append(f"{name} round loop: load address register R{reg} comes from "
                                    f"{wop}{wmods} {wops} @{d[0]:#x} (not an addition or a copy)")
                    return
                for r in REGISTER.findall(",".join(wops.split(",")[1:])):
                    trace(int(r), d[0], seen)

            for addr, op, mods, operands in loads:
                for reg in address_registers(operands):
                    trace(reg, addr, set())
            alu = sum(1 for c in inside if c[1] in {"LOP3", "SHF", "PRMT", "IADD3", "SEL", "ISETP", "LEA", "MOV"})
            report.append(f"{name}: round loop {body[0]:#x}..{body[1]:#x}: {len(inside)} instructions, "
                          f"{alu} ALU, {len(loads)} loads (round keys), no other memory access")
    return problems, report


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems, report = check(sys.argv[1])
    for line in report:
        print(line)
    for p in problems:
        print("VIOLATION:", p)
    print("aes_sass_check:", "ok" if not problems else f"{len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
