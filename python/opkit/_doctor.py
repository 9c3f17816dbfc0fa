"""opkit.doctor(): `opkit doctor` inside the Python process.

Run it after the imports your program makes (torch, cupy, ...): what they load into the process,
a second C++ runtime or another CUDA, is part of what it checks."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from . import _opkit


def doctor(*, smoke: bool = True, require_gpu: bool = False, file: TextIO | None = sys.stdout) -> dict[str, Any]:
    """Checks the driver, NVRTC, GPUs, kernel cache, CPU backend and C++ runtime; prints one line
    per check (with the cause and the fix under any that is not ok) to `file` unless it is None,
    and returns the report: {'checks': [...], 'working_gpus', 'cpu_backend_works', 'ready', 'summary',
    'text'}, 'text' being what it prints.

    smoke: compile and launch a small kernel on every device (about a second).
    require_gpu: 'ready' only if a GPU works.
    """
    report = _opkit.doctor(smoke, require_gpu)
    if file is not None:
        print(report["text"], end="", file=file)
    return report
