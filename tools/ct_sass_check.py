#!/usr/bin/env python3
"""Checks from the SASS that no memory address and no branch of a kernel depends on secret data.

Constant time, as docs/ciphers.md promises it for the ChaCha20 and Poly1305 kernels: every value a
kernel loads (message bytes, key words, Poly1305's powers of r) is treated as secret, and taint is
followed through the registers and predicates of every instruction, and through local-memory
slots (spills), along the control-flow graph to a fixed point. A violation is
  - a memory access (LDG, STG, LDS, STS, LD, ST, ATOM, RED, LDL, STL) whose address registers are
    tainted, or that is predicated on a tainted predicate;
  - a branch predicated on a tainted predicate, or an indirect branch through a tainted register;
  - an indexed constant load (c[bank][R]) with a tainted index.
Kernel parameters (constant bank 0: pointers, lengths, counts) and special registers (thread and
block indices) are public, and so is what is loaded through a pointer derived only from the
parameters named by --public-param (a batch's offset tables), or through a pointer derived from
the parameter named by --public-field at an immediate offset inside its byte range (the public
fields of a per-message record that also holds secrets: the pointer is taken to point at the
record's start, so a field whose offset the compiler folds into the register counts as secret).
An asynchronous copy to shared memory (LDGSTS) is a memory access with two addresses; shared
memory is not followed (what a load from it reads is secret, as every load's is). A predicated instruction that is not
a memory access or branch merges taint (a select), so masked, branch-free code passes; a value
written under @P from public sources is public for the instructions under the same @P (@!P being
the other sense), and one written public under @P and then under @!P (a select's two arms) is
public.

The analysis is conservative: a register pair or quad named by its first register (.64, .128,
IMAD.WIDE's addend, F64, every operand of a tensor-core MMA) is read and written whole, and a subroutine returns to every call site.
An opcode it does not model makes it refuse rather than guess.

usage: ct_sass_check.py KERNELS.cubin [--kernel SUBSTRING ...] [--public-param OFFSET ...]
                       [--public-field OFFSET:FROM:TO ...]
  exit 0: every checked kernel passes; 1: a violation (listed); 2: no cuobjdump, or no kernels in
  its output; 3: an opcode the checker does not model (listed; nothing is vouched for then).
  Needs cuobjdump ($CUOBJDUMP, or on PATH) and the nvdisasm it runs.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_listing import disassemble, functions  # noqa: E402  (same folder: the one SASS reader)

TOKEN = re.compile(r"\bU?R(?:Z|\d+)\b|\bU?P(?:T|\d)\b|\bPR\b")

MEMORY = {"LDG", "STG", "LDS", "STS", "LD", "ST", "ATOM", "ATOMS", "ATOMG", "RED", "REDG", "LDL", "STL", "LDSM",
          "LDGSTS"}
LOADS = {"LDG", "LDS", "LD", "LDL", "ATOM", "ATOMS", "ATOMG", "LDSM"}
STORES = {"STG", "STS", "ST", "STL", "RED", "REDG"}
LOCAL = {"LDL", "STL"}
BRANCHES = {"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT"}
NO_DEST = {"BRA", "BRX", "JMP", "JMX", "RET", "EXIT", "BAR", "BSSY", "BSYNC", "WARPSYNC", "NOP", "YIELD", "MEMBAR",
           "ERRBAR", "DEPBAR", "CCTL", "FENCE", "CALL", "ENDCOLLECTIVE", "BPT", "KILL", "NANOSLEEP", "ACQBULK",
           "LDGSTS", "LDGDEPBAR"}
MMA = {"BMMA", "HMMA", "IMMA"}
# Instructions whose first two operands are both predicates they write.
TWO_PREDICATE_DESTS = {"ISETP", "FSETP", "DSETP", "HSETP2", "PSETP", "UISETP", "PLOP3", "UPLOP3"}
KNOWN = (MEMORY | BRANCHES | NO_DEST | TWO_PREDICATE_DESTS | {
    "IADD3", "UIADD3", "IMAD", "UIMAD", "IMUL", "VIADD", "IABS", "IMNMX", "VIMNMX", "VIADDMNMX", "LOP3", "ULOP3", "LOP", "SHF", "USHF",
    "SHL", "SHR", "LEA", "ULEA", "PRMT", "UPRMT", "SEL", "USEL", "FSEL", "MOV", "UMOV", "MOV32I", "S2R", "S2UR",
    "CS2R", "LDC", "ULDC", "R2UR", "R2P", "P2R", "BREV", "UBREV", "FLO", "UFLO", "POPC", "UPOPC", "BMSK", "UBMSK",
    "SGXT", "USGXT", "I2F", "F2I", "I2FP", "F2IP", "MUFU", "FADD", "FMUL", "FFMA", "HFMA2", "HADD2", "HMUL2", "DADD",
    "DMUL", "DFMA", "FRND", "F2F", "I2I", "SHFL", "VOTE", "VOTEU", "IDP", "IDP4A", "FMNMX", "ICMP", "UP2UR",
    "UR2UP", "LEPC", "REDUX", "MATCH", "FCHK", "ISCADD"} | MMA)


def split_operands(text):
    """Top-level comma split (commas inside [] stay)."""
    out, depth, current = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current.strip())
    return out


def width(op, mods):
    # Tensor-core MMAs (m16n8k*: D and C are register quads, A a quad, B a pair): every operand
    # taken as a quad, which may add registers read but never misses one written.
    if ".128" in mods or op in MMA:
        return 4
    if ".64" in mods or (op == "IMAD" and ".WIDE" in mods) or op in ("DADD", "DMUL", "DFMA", "CS2R") or ".F64" in mods:
        return 2
    return 1


def names(operand, span):
    """The registers and predicates an operand names; a register followed by .64 (or an
    instruction of width > 1 naming it outside brackets) covers the next ones too."""
    out = set()
    for m in TOKEN.finditer(operand):
        token = m.group(0)
        if token in ("RZ", "URZ", "PT", "UPT"):
            continue
        if token == "PR":
            out.update(f"P{i}" for i in range(7))
            continue
        n = span
        if operand[m.end():m.end() + 3] == ".64":
            n = 2
        prefix = "UR" if token.startswith("UR") else "R" if token.startswith("R") else None
        if prefix is None:
            out.add(token)
            continue
        base = int(token[len(prefix):])
        out.update(f"{prefix}{base + k}" for k in range(n))
    return out


class Instruction:
    def __init__(self, address, guard, op, mods, operands):
        self.address, self.op, self.mods, self.text = address, op, mods, operands
        self.guard = guard.strip().lstrip("@").lstrip("!") if guard else None
        # The guard with its sense ("P0" or "!P0"): the condition under which the instruction runs
        # (None: always, or never for @!PT).
        self.condition = guard.strip().lstrip("@") if guard and self.guard not in ("PT", "UPT") else None
        ops = split_operands(operands)
        span = width(op, mods)
        self.address_regs = set()  # registers inside [] of a memory access (its address)
        self.pointer_regs = set()  # the same less the memory descriptor (desc[UR4]): the pointer
        self.offset = 0  # the address's immediate offset ([R2.64+0xf0])
        for o in ops:
            if "[" in o and (op in MEMORY):
                for inner in re.findall(r"\[([^\]]*)\]", o):
                    self.address_regs |= names(inner, 1)
                for inner in re.findall(r"(?<!desc)\[([^\]]*)\]", o):
                    self.pointer_regs |= names(inner, 1)
                    m = re.search(r"\+\s*(-?)0x([0-9a-f]+)\s*$", inner)
                    if m:
                        self.offset = (-1 if m.group(1) else 1) * int(m.group(2), 16)
        # A kernel parameter read (LDC / ULDC c[0x0][offset]): its offset.
        m = re.search(r"(?<![A-Za-z])c\[0x0\]\[(0x[0-9a-f]+)\]", operands) if op in ("LDC", "ULDC") else None
        self.param = int(m.group(1), 16) if m else None
        self.indexed_constant = set()
        for o in ops:
            for inner in re.findall(r"(?<![A-Za-z])c\[[^\]]*\]\[([^\]]*)\]", o):
                self.indexed_constant |= names(inner, 1)
        self.dests, self.sources = set(), set()
        if op in STORES:
            self.sources |= names(ops[-1], span)  # the value stored (its address: address_regs)
        elif op in NO_DEST:
            for o in ops:
                self.sources |= names(o, 1)
        else:
            count = 2 if op in TWO_PREDICATE_DESTS else 1
            # Leading predicate outputs (LOP3 P0, R2, ...; SHFL PT, R5, ...) before the register,
            # and carry-out predicates right after it (IADD3 R2, P0, ...; LEA R2, P1, ...;
            # IMAD.WIDE R8, P0, ...).
            i = 0
            if count == 1:
                while i < len(ops) and re.fullmatch(r"U?P(?:T|\d)", ops[i]):
                    self.dests |= names(ops[i], 1)
                    i += 1
                if i < len(ops):
                    self.dests |= names(ops[i], span)
                    i += 1
                # (IMAD.WIDE / IMAD.HI with a carry out: IMAD.WIDE.U32 R8, P0, R9, R0, R8.)
                if op in ("IADD3", "UIADD3", "LEA", "ULEA", "IMAD", "UIMAD"):
                    while i < len(ops) and re.fullmatch(r"U?P(?:T|\d)", ops[i]):
                        self.dests |= names(ops[i], 1)
                        i += 1
            else:
                for o in ops[:2]:
                    self.dests |= names(o, 1)
                i = 2
            rest = ops[i:]
            if op in MEMORY:
                pass  # a load reads its address (below)
            elif op == "IMAD" and ".WIDE" in mods:  # 32 x 32 + 64
                for j, o in enumerate(rest):
                    self.sources |= names(o, 2 if j == 2 else 1)
            else:
                for o in rest:
                    self.sources |= names(o, span)
        if self.guard and self.guard not in ("PT", "UPT"):
            self.sources.add(self.guard)
        # Local memory at the stack pointer plus a constant: the 4-byte slots touched (None when
        # the address holds another register: a runtime index).
        self.local_slots = None
        self.stored = set()
        if op in LOCAL:
            m = re.search(r"\[R1(?:\+(0x[0-9a-f]+))?\]", operands)
            if m and len(self.address_regs) == 1:
                base = int(m.group(1), 16) if m.group(1) else 0
                self.local_slots = [base + 4 * k for k in range(span)]
            if op == "STL":
                self.stored = names(ops[-1], span)
        self.sources |= self.address_regs
        self.target = None
        if op in ("BRA", "JMP", "CALL"):
            m = re.search(r"0x([0-9a-f]+)", operands)
            self.target = int(m.group(1), 16) if m else None


def kernels(text):
    return {name: [Instruction(*ins) for ins in code] for name, code in functions(text).items()}


class State:
    """Taint before an instruction: tainted registers and predicates; `public_if`, registers that
    hold a public value whenever a condition holds ("P0" or "!P0": written under @P0 or @!P0 from
    public sources, what predicated code in the pattern `@P x = ...; @P load [x]` needs; written
    public under both, `@P x = a; @!P x = b`, a register is public); local-memory slots' taint."""

    def __init__(self, tainted=frozenset(), public_if=(), local=(), pointers=()):
        self.tainted = frozenset(tainted)
        self.public_if = frozenset(public_if)  # (register, predicate)
        self.local = frozenset(local)  # (slot, tainted)
        self.pointers = frozenset(pointers)  # (register, parameter offset it derives from)

    def key(self):
        return (self.tainted, self.public_if, self.local, self.pointers)

    def join(self, other):
        slots = dict(self.local)
        for slot, t in other.local:
            slots[slot] = slots.get(slot, True) or t if slot in slots else True
        for slot in dict(self.local):
            if slot not in dict(other.local):
                slots[slot] = True
        return State(self.tainted | other.tainted, self.public_if & other.public_if, slots.items(),
                     self.pointers | other.pointers)

    def derived_from(self, registers):
        return {p for r, p in self.pointers if r in registers}

    def is_tainted(self, register, condition):
        return register in self.tainted and not (condition and (register, condition) in self.public_if)


def public_load(ins, from_params, public_params, public_fields):
    """Whether a load through a pointer derived from the parameters `from_params` reads public
    data: only public parameters, or a public field's bytes of a record (FROM <= offset and
    offset + the load's bytes <= TO)."""
    if public_params and from_params and from_params <= public_params:
        return True
    size = 4 * width(ins.op, ins.mods)
    return any(param in from_params and lo <= ins.offset and ins.offset + size <= hi
               for param, lo, hi in public_fields)


def step(ins, state, public_params=frozenset(), public_fields=()):
    """The state after `ins`. A load through a pointer derived only from parameters in
    `public_params` (and public values) reads public data: batch offsets and lengths; so does one
    of a field in `public_fields` ((parameter, from, to), public_load)."""
    tainted, public_if, local = set(state.tainted), set(state.public_if), dict(state.local)
    pointers = {(r, p) for r, p in state.pointers if r not in ins.dests}
    derived = state.derived_from(ins.sources) | ({ins.param} if ins.param is not None else set())
    if ins.op not in LOADS:
        pointers |= {(d, p) for d in ins.dests for p in derived}
    guard = ins.condition
    any_tainted = any(state.is_tainted(r, guard) for r in ins.sources | ins.address_regs)
    if ins.op == "STL":
        value = any(state.is_tainted(r, guard) for r in ins.stored) or any_tainted
        slots = ins.local_slots if ins.local_slots is not None else [slot for slot in local]
        for slot in slots:
            local[slot] = value or (guard is not None and local.get(slot, True))
        if ins.local_slots is None and value:
            local = {slot: True for slot in local}
    if ins.dests:
        if ins.op == "LDL" and ins.local_slots is not None and not any_tainted:
            loaded = any(local.get(slot, True) for slot in ins.local_slots)
        elif ins.op in LOADS:
            loaded = not public_load(ins, state.derived_from(ins.pointer_regs), public_params, public_fields)
        else:
            loaded = False
        dest_tainted = loaded or any_tainted
        # A public value written under a guard leaves a register public wherever it was (under
        # any condition it now holds the old public value or the new one); other writes void
        # what was known of it.
        if dest_tainted or guard is None:
            for d in ins.dests:
                public_if = {(r, p) for r, p in public_if if r != d}
        if dest_tainted:
            tainted |= ins.dests
        elif guard is None:
            tainted -= ins.dests
        else:
            # Public under the other sense of the same guard too (written since, the predicate not
            # rewritten: either would have voided that entry): public whatever the predicate.
            opposite = guard[1:] if guard.startswith("!") else "!" + guard
            both = {d for d in ins.dests if (d, opposite) in state.public_if}
            tainted -= both
            public_if |= {(d, guard) for d in ins.dests - both}
        # A predicate written anew voids what was known under it.
        for p in ins.dests:
            if p.startswith("P") or p.startswith("UP"):
                public_if = {(r, q) for r, q in public_if if q.lstrip("!") != p}
    return State(tainted, public_if, local.items(), pointers)


class Unmodeled(Exception):
    """An opcode whose reads and writes this checker does not know."""


def check(code, public_params=frozenset(), public_fields=()):
    """Violations (strings) of one kernel, by a forward taint analysis to a fixed point."""
    unknown = sorted({i.op for i in code if i.op not in KNOWN})
    if unknown:
        raise Unmodeled(", ".join(unknown))
    at = {ins.address: k for k, ins in enumerate(code)}
    # A subroutine (CALL to an address in the same listing) returns to every call site: the
    # flow through it is merged over all of them.
    return_sites = [k + 1 for k, ins in enumerate(code) if ins.op == "CALL" and k + 1 < len(code)]
    successors = []
    for k, ins in enumerate(code):
        nxt = [k + 1] if k + 1 < len(code) else []
        if ins.op == "EXIT" and not ins.guard:
            nxt = []
        if ins.op == "RET":
            nxt = (nxt if ins.guard else []) + return_sites
        if ins.op in ("BRA", "JMP", "CALL") and ins.target is not None:
            if ins.target not in at:
                raise Unmodeled(f"a branch or call to {ins.target:#x}, outside the kernel's listing")
            nxt = ([] if ins.op != "CALL" and not ins.guard else nxt) + [at[ins.target]]
        successors.append(nxt)
    states = [None] * len(code)  # the state on entry to each instruction
    states[0] = State()
    work = [0]
    while work:
        k = work.pop()
        out = step(code[k], states[k], public_params, public_fields)
        for s in successors[k]:
            merged = out if states[s] is None else states[s].join(out)
            if states[s] is None or merged.key() != states[s].key():
                states[s] = merged
                work.append(s)
    violations, checked = [], 0
    for k, ins in enumerate(code):
        state = states[k]
        if state is None:
            continue  # unreachable
        checked += 1
        guard = ins.guard if ins.guard not in ("PT", "UPT") else None
        condition = ins.condition
        where = f"{ins.address:#06x} {ins.op}{ins.mods} {ins.text}"
        bad_address = sorted(r for r in ins.address_regs if state.is_tainted(r, condition))
        if ins.op in MEMORY and bad_address:
            violations.append(f"address from loaded data ({', '.join(bad_address)}): {where}")
        if ins.op in MEMORY | BRANCHES and guard and guard in state.tainted:
            violations.append(f"predicated on loaded data ({guard}): {where}")
        if ins.op in ("BRX", "JMX") and any(state.is_tainted(r, condition) for r in ins.sources):
            violations.append(f"indirect branch through loaded data: {where}")
        if any(state.is_tainted(r, condition) for r in ins.indexed_constant):
            violations.append(f"constant bank indexed by loaded data: {where}")
    return violations, checked


def field(text):
    """OFFSET:FROM:TO -> (offset, from, to)."""
    parts = [int(x, 0) for x in text.split(":")]
    if len(parts) != 3 or parts[1] >= parts[2]:
        raise argparse.ArgumentTypeError(f"{text}: want OFFSET:FROM:TO with FROM < TO")
    return tuple(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cubin")
    parser.add_argument("--kernel", action="append", default=[], help="check only kernels whose name contains this")
    parser.add_argument("--public-param", action="append", default=[], type=lambda x: int(x, 0),
                        help="the offset in constant bank 0 (0x210 is the first parameter on sm_90) of a pointer "
                             "parameter whose data is public (a batch's offsets): loads through it are not secret")
    parser.add_argument("--public-field", action="append", default=[], type=field,
                        help="OFFSET:FROM:TO: bytes [FROM, TO) of the records a pointer parameter (at OFFSET in "
                             "constant bank 0) points at are public (a per-message state's counter and round count "
                             "beside its keys): loads of them, at those immediate offsets, are not secret")
    args = parser.parse_args()
    found = kernels(disassemble(args.cubin, "ct_sass_check"))
    if not found:
        print("ct_sass_check: no kernels in the SASS", file=sys.stderr)
        return 2
    failed = False
    for name, code in found.items():
        if args.kernel and not any(k in name for k in args.kernel):
            continue
        try:
            violations, checked = check(code, frozenset(args.public_param), tuple(args.public_field))
        except Unmodeled as e:
            print(f"{name}: opcodes this checker does not model: {e}")
            print("ct_sass_check: cannot check")
            return 3
        print(f"{name}: {checked} instructions, {len(violations)} violation(s)")
        for v in violations:
            print(f"  {v}")
        failed = failed or bool(violations)
    print("ct_sass_check: " + ("VIOLATIONS" if failed else "ok"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
