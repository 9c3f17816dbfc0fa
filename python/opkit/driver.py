"""The names of pycuda.driver that opkit provides: `import opkit.driver as cuda` ports code written
for `import pycuda.driver as cuda`. Memory and copies act on opkit.default_device()."""

from ._devices import default_device, synchronize
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
from ._kernels import Function, Module, module_from_buffer, module_from_file
from ._opkit import DeviceAllocation, Error


def Stream(device=None):  # noqa: N802 (PyCUDA's spelling: cuda.Stream())
    """A new stream on the device (default: opkit.default_device()), owned by the returned object."""
    from ._devices import get_device

    return get_device(device).create_stream()


def Event(device=None):  # noqa: N802 (PyCUDA's spelling: cuda.Event())
    """A new event on the device, for ordering and timing (record, synchronize, elapsed_ms)."""
    from ._devices import get_device

    return get_device(device).create_event()


class Context:
    """PyCUDA's Context.synchronize(), acting on the default device's primary context."""

    @staticmethod
    def synchronize() -> None:
        synchronize()

    @staticmethod
    def get_device():
        return default_device()


__all__ = [
    "Context",
    "DeviceAllocation",
    "Error",
    "Event",
    "Function",
    "In",
    "InOut",
    "Module",
    "Out",
    "Stream",
    "mem_alloc",
    "mem_get_info",
    "memcpy_dtod",
    "memcpy_dtoh",
    "memcpy_dtoh_async",
    "memcpy_htod",
    "memcpy_htod_async",
    "memset_d8",
    "memset_d16",
    "memset_d32",
    "module_from_buffer",
    "module_from_file",
]
