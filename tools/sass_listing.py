"""cuobjdump's SASS listing of a cubin, read into kernels and instructions: the reader that the
constant-time checks (aes_sass_check.py, ct_sass_check.py) share. Needs cuobjdump ($CUOBJDUMP, or
on PATH) and the nvdisasm it runs."""
import os
import re
import subprocess
import sys

LINE = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(@!?U?P[T0-9]\s+)?([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_]+)*)\s*(.*?)\s*;")
FUNCTION = re.compile(r"^\s+Function : (\S+)")


def disassemble(path, program):
    """The SASS text of the cubin at `path`; exits with status 2, naming `program`, when cuobjdump
    cannot run."""
    tool = os.environ.get("CUOBJDUMP", "cuobjdump")
    try:
        return subprocess.run([tool, "-sass", path], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"{program}: cannot run {tool}: {e}", file=sys.stderr)
        sys.exit(2)


def functions(text):
    """{kernel name: [(address, guard or None, opcode, modifiers, operands)]} in listing order."""
    out, name = {}, None
    for line in text.splitlines():
        f = FUNCTION.match(line)
        if f:
            name = f.group(1)
            out[name] = []
            continue
        m = LINE.match(line)
        if m and name:
            out[name].append((int(m.group(1), 16), m.group(2), m.group(3), m.group(4), m.group(5)))
    return out
