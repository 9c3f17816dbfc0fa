#!/usr/bin/env python3
"""Per-hash SASS counts (ALU pipe, FMA pipe, all issued) of the cubins opkit_kernel_cubins writes,
as one Markdown table: the numbers to compare before and after a change to the kernel sources.

usage: sass_table.py DIR
Each DIR/NAME.RULE.cubin is counted with tools/sass_count.py; RULE says what one hash is:
  whole         the whole kernel (one message per thread, no loop)
  loop          the first loop's body (a miner tests one nonce per iteration)
  whole+Nloop   the whole kernel plus N more trips of its first loop
  each          no single figure; each loop body is listed
Columns: per hash ALU / FMA slots (IMAD.WIDE and .HI count two) / issued, the whole kernel's
static counts, each loop body's ALU / FMA, and registers per thread (cuobjdump's resource usage).
"""
import os
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_count import count, disassemble, loops, parse, summary  # noqa: E402


def registers(cubin):
    """{kernel: registers per thread}"""
    tool = os.environ.get("CUOBJDUMP", "cuobjdump")
    text = subprocess.run([tool, "--dump-resource-usage", cubin], check=True, capture_output=True, text=True).stdout
    out, name = {}, None
    for line in text.splitlines():
        m = re.search(r"Function (\S+):", line)
        if m:
            name = m.group(1)
        m = re.search(r"REG:(\d+)", line)
        if m and name:
            out[name] = int(m.group(1))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    cubins = sorted(pathlib.Path(sys.argv[1]).glob("*.cubin"))
    if not cubins:
        sys.exit(f"sass_table: no cubin in {sys.argv[1]}")
    print("| kernel | ALU/hash | FMA/hash | issued/hash | whole kernel ALU / FMA / issued | loop bodies ALU / FMA | regs |")
    print("|---|---:|---:|---:|---:|---|---:|")
    for cubin in cubins:
        name, rule = cubin.stem.rsplit(".", 1)
        regs = registers(str(cubin))
        for kernel, instructions in parse(disassemble(str(cubin))).items():
            whole = summary(count(instructions)[1], 1, 132, 1.98)
            bodies = [summary(count(instructions, s, e)[1], 1, 132, 1.98) for s, e in loops(instructions)]
            keys = ("alu_per_hash", "fma_per_hash", "issue_per_hash")
            m = re.fullmatch(r"whole(?:\+(\d+)loop)?|loop|each", rule)
            if not m:
                sys.exit(f"sass_table: {cubin.name}: unknown rule {rule}")
            if rule == "each":
                per = None
            elif rule == "loop":
                per = [bodies[0][k] for k in keys] if bodies else None
            else:
                extra = int(m.group(1) or 0)
                per = [whole[k] + (extra * bodies[0][k] if extra else 0) for k in keys]
            cells = [f"{v:.0f}" for v in per] if per else ["-", "-", "-"]
            loop_text = ", ".join(f"{b['alu_per_hash']:.0f} / {b['fma_per_hash']:.0f}" for b in bodies) or "-"
            print(f"| {name} ({kernel}) | " + " | ".join(cells) +
                  f" | {whole['alu_per_hash']:.0f} / {whole['fma_per_hash']:.0f} / {whole['issue_per_hash']:.0f}"
                  f" | {loop_text} | {regs.get(kernel, '?')} |")


if __name__ == "__main__":
    main()
