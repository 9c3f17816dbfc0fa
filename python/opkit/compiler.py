"""pycuda.compiler under opkit: `from opkit.compiler import SourceModule, compile`."""

from __future__ import annotations

from . import _opkit
from ._kernels import SourceModule


def compile(  # noqa: A001 (PyCUDA's name: pycuda.compiler.compile)
    source: str,
    *,
    arch: str | None = None,
    target: str = "cubin",
    options=None,
    include_dirs=(),
    defines=None,
    headers=None,
    name_expressions=(),
    name: str = "kernel.cu",
) -> bytes:
    """Compiles CUDA C++ ahead of time with NVRTC, no GPU needed, and returns the binary: a cubin
    (target="cubin", arch "sm_90") or PTX text (target="ptx", arch "compute_90" or "sm_90").
    arch defaults to the first GPU's. Load the result with opkit.driver.module_from_buffer, or
    write it to a file for module_from_file. Compile errors raise opkit.CompileError."""
    if target not in ("cubin", "ptx"):
        raise ValueError(f"target must be 'cubin' or 'ptx', got {target!r}")
    if arch is None:
        from ._devices import get_device

        arch = get_device("cuda").arch
    if target == "ptx" and arch.startswith("sm_"):
        arch = "compute_" + arch[3:]
    if isinstance(options, str):
        raise TypeError("options must be a list of strings, e.g. ['--use_fast_math']")
    fmt, built_for, binary, _log = _opkit.build_binary(
        "cuda",
        arch,
        source,
        name,
        [str(o) for o in (options or [])],
        [str(d) for d in include_dirs],
        [(str(k), "" if v is None else str(v)) for k, v in (defines or {}).items()],
        [(str(k), str(v)) for k, v in (headers or {}).items()],
        [str(e) for e in name_expressions],
    )
    if fmt != target:
        raise ValueError(f"NVRTC can only make {fmt} for {built_for}, not a {target}; ask for target='{fmt}'")
    return binary


__all__ = ["SourceModule", "compile"]
