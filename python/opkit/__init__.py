"""opkit: runtime-compiled custom GPU operators for Python.

- PyCUDA-style kernels: SourceModule(source).get_function(name)(args..., block=, grid=), with
  mem_alloc / memcpy_htod / memcpy_dtoh and In / Out / InOut (also as opkit.driver and
  opkit.compiler, so that `import pycuda.driver as cuda` ports as `import opkit.driver as cuda`).
- Operators on framework arrays through DLPack, on the array's own device: sha256, sha256d,
  encrypt / decrypt (AES-CTR/GCM, ChaCha20, ChaCha20-Poly1305).
- Proof-of-work mining: mine.
- doctor(): `opkit doctor`'s environment checks, run inside this process.

CUDA is loaded at run time (driver and NVRTC); without a GPU, opkit uses the CPU.
"""

import os as _os
import sys as _sys

# NVRTC from `pip install nvidia-cuda-nvrtc` lives in site-packages (nvidia/cu13/lib,
# nvidia/cuda_nvrtc/lib): tell the library where this interpreter's site folders are, before the
# extension first loads NVRTC. An OPKIT_SITE_PACKAGES the user set is kept in front.
_os.environ["OPKIT_SITE_PACKAGES"] = _os.pathsep.join(
    [p for p in [_os.environ.get("OPKIT_SITE_PACKAGES", "")] + _sys.path if p and _os.path.isdir(p)]
)

from ._opkit import AuthenticationError, CompileError, Device, DeviceAllocation, Error, Event, Stream, version as __version__
from ._arrays import DeviceArray, empty, to_device
from ._doctor import doctor
from ._devices import ExternalStream, backends, default_device, devices, get_device, set_default_device, synchronize
from ._cipher import decrypt, encrypt
from ._hash import sha256, sha256d
from ._kernels import Function, Module, RawKernel, RawModule, SourceModule, module_from_buffer, module_from_file
from ._lz4 import lz4_compress, lz4_decompress
from ._memory import (
    In,
    InOut,
    Out,
    mem_alloc,
    mem_get_info,
    memcpy_dtod,
    memcpy_dtoh,
    memcpy_dtoh_async,
    memcpy_htod,
    memcpy_htod_async,
    memset_d8,
    memset_d16,
    memset_d32,
)
from ._mine import MineProgress, MineResult, mine

__all__ = [
    "lz4_compress",
    "lz4_decompress",
    "__version__",
    "AuthenticationError",
    "CompileError",
    "Device",
    "DeviceAllocation",
    "DeviceArray",
    "Error",
    "Event",
    "Function",
    "In",
    "InOut",
    "MineProgress",
    "MineResult",
    "Module",
    "Out",
    "RawKernel",
    "RawModule",
    "SourceModule",
    "ExternalStream",
    "Stream",
    "backends",
    "decrypt",
    "default_device",
    "doctor",
    "devices",
    "empty",
    "encrypt",
    "get_device",
    "mem_alloc",
    "module_from_buffer",
    "module_from_file",
    "mem_get_info",
    "memcpy_dtod",
    "memcpy_dtoh",
    "memcpy_dtoh_async",
    "memcpy_htod",
    "memcpy_htod_async",
    "memset_d8",
    "memset_d16",
    "memset_d32",
    "mine",
    "set_default_device",
    "sha256",
    "sha256d",
    "synchronize",
    "to_device",
]
