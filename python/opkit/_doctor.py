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
    and returns the report: {'checks': [...], 'working_gpus', 'cpu_backend_works', 'ready'}.

    smoke: compile and launch a small kernel on every device (about a second).
    require_gpu: 'ready' only if a GPU works.
    """
    report = _opkit.doctor(smoke, require_gpu)
    any_works = report["working_gpus"] > 0 or report["cpu_backend_works"]
    report["ready"] = report["working_gpus"] > 0 if require_gpu else any_works
    if file is not None:
        print(f"opkit {_opkit.version} doctor", file=file)
        for check in report["checks"]:
            print(f"{check['status']:<4}  {check['name']:<16} {check['detail']}", file=file)
            for key in ("cause", "fix"):
                if check[key]:
                    print(f"      {'':<16} {key + ':':<6} {check[key]}", file=file)
        gpus = report["working_gpus"]
        cpu = "works" if report["cpu_backend_works"] else "does not work"
        print(f"{'ready' if report['ready'] else 'not ready'}: {gpus} GPU{'' if gpus == 1 else 's'} "
              f"work{'s' if gpus == 1 else ''}, the CPU backend {cpu}", file=file)
    return report
