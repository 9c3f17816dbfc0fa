"""PyCUDA-style device memory: mem_alloc, memcpy_htod/dtoh/dtod (and their _async forms),
memset_d8/d16/d32, and the argument wrappers In, Out and InOut that copy a host array to the
device for one kernel call and back after it."""

from __future__ import annotations

import numpy as np

from . import _opkit
from ._arrays import as_stream, capsule, dlpack_device, is_dlpack, on_host
from ._devices import get_device
from ._opkit import DeviceAllocation


def mem_alloc(nbytes: int, device=None) -> DeviceAllocation:
    """Allocates nbytes of device memory, freed when the object dies (or by .free())."""
    if nbytes < 0:
        raise ValueError(f"mem_alloc: nbytes must not be negative, got {nbytes}")
    return DeviceAllocation(get_device(device), int(nbytes))


def mem_get_info(device=None) -> tuple[int, int]:
    """(free, total) bytes of device memory."""
    dev = get_device(device)
    return dev.free_memory(), dev.total_memory


def host_array(obj, *, writable: bool, what: str) -> np.ndarray:
    """A NumPy view of a host array (NumPy, or any CPU DLPack producer), C-contiguous. Read-only
    uses may get a contiguous copy; writable uses must share the caller's memory."""
    if isinstance(obj, np.ndarray):
        array = obj
    elif is_dlpack(obj) and on_host(obj):
        array = np.from_dlpack(obj)
    elif is_dlpack(obj):
        raise TypeError(f"{what}: expected a host array, got one in device memory ({type(obj).__name__})")
    elif writable:
        raise TypeError(f"{what}: expected a NumPy array (or a CPU DLPack array), got {type(obj).__name__}")
    else:
        array = np.asarray(obj)
    if writable:
        hint = " (wrap an input-only array in opkit.In(a))" if what == "InOut" else ""
        if not array.flags.c_contiguous:
            raise ValueError(f"{what}: the host array must be C-contiguous to be written in place{hint}")
        if not array.flags.writeable:
            raise ValueError(f"{what}: the host array is read-only{hint}")
        return array
    return np.ascontiguousarray(array)


def _address(device_memory, what: str) -> tuple[int, object]:
    """(address, device or None) of a DeviceAllocation, a CUDA DLPack array or a raw integer."""
    if isinstance(device_memory, DeviceAllocation):
        return device_memory.ptr, device_memory.device
    if isinstance(device_memory, bool):
        raise TypeError(f"{what}: expected device memory, got a bool")
    if isinstance(device_memory, int):
        return device_memory, None
    if is_dlpack(device_memory) and not on_host(device_memory):
        return _opkit.array_info(capsule(device_memory))[0], _opkit.Device.cuda(dlpack_device(device_memory)[1])
    raise TypeError(
        f"{what}: expected a DeviceAllocation, a device array or an address, got {type(device_memory).__name__}"
    )


def _nbytes(device_memory, host: np.ndarray, what: str) -> int:
    if isinstance(device_memory, DeviceAllocation) and host.nbytes > device_memory.nbytes:
        raise ValueError(f"{what}: {host.nbytes} bytes do not fit in an allocation of {device_memory.nbytes} bytes")
    return host.nbytes


def _copy_device(owner, stream):
    """The device that runs a copy (the memory's own, else the default) and the stream to use."""
    device = owner if owner is not None else get_device()
    return device, as_stream(device, stream)


def memcpy_htod(dest, src, stream=None) -> None:
    """Copies the host array src into device memory dest (synchronous without a stream)."""
    host = host_array(src, writable=False, what="memcpy_htod")
    address, owner = _address(dest, "memcpy_htod")
    device, s = _copy_device(owner, stream)
    _opkit.copy(device, address, host.ctypes.data, _nbytes(dest, host, "memcpy_htod"), "htod", s)


def memcpy_dtoh(dest, src, stream=None) -> None:
    """Copies device memory src into the host array dest (synchronous without a stream)."""
    host = host_array(dest, writable=True, what="memcpy_dtoh")
    address, owner = _address(src, "memcpy_dtoh")
    device, s = _copy_device(owner, stream)
    _opkit.copy(device, host.ctypes.data, address, _nbytes(src, host, "memcpy_dtoh"), "dtoh", s)


def memcpy_dtod(dest, src, size: int, stream=None) -> None:
    """Copies size bytes between two device allocations."""
    dst_address, owner = _address(dest, "memcpy_dtod")
    src_address, _ = _address(src, "memcpy_dtod")
    for memory in (dest, src):
        if isinstance(memory, DeviceAllocation) and size > memory.nbytes:
            raise ValueError(f"memcpy_dtod: {size} bytes exceed an allocation of {memory.nbytes} bytes")
    device, s = _copy_device(owner, stream)
    _opkit.copy(device, dst_address, src_address, int(size), "dtod", s)


def memcpy_htod_async(dest, src, stream=None) -> None:
    """memcpy_htod queued on `stream` (the host array must stay alive and unchanged until then)."""
    memcpy_htod(dest, src, stream if stream is not None else _default_stream(dest))


def memcpy_dtoh_async(dest, src, stream=None) -> None:
    """memcpy_dtoh queued on `stream`: dest is written once the stream reaches the copy."""
    memcpy_dtoh(dest, src, stream if stream is not None else _default_stream(src))


def _default_stream(device_memory):
    _, owner = _address(device_memory, "memcpy")
    return (owner if owner is not None else get_device()).default_stream()


def _memset(dest, value: int, count: int, pattern_bytes: int, stream) -> None:
    address, owner = _address(dest, f"memset_d{8 * pattern_bytes}")
    if isinstance(dest, DeviceAllocation) and count * pattern_bytes > dest.nbytes:
        raise ValueError(f"memset_d{8 * pattern_bytes}: {count} elements exceed an allocation of {dest.nbytes} bytes")
    device, s = _copy_device(owner, stream)
    _opkit.fill(device, address, int(value) & ((1 << (8 * pattern_bytes)) - 1), pattern_bytes, int(count), s)


def memset_d8(dest, value: int, count: int, stream=None) -> None:
    """Sets `count` 8-bit words of device memory at dest (a DeviceAllocation or address) to
    `value` (0 <= value < 2**8); synchronous without a stream, queued on it with one."""
    _memset(dest, value, count, 1, stream)


def memset_d16(dest, value: int, count: int, stream=None) -> None:
    """Sets `count` 16-bit words of device memory at dest (a DeviceAllocation or address) to
    `value` (0 <= value < 2**16); synchronous without a stream, queued on it with one."""
    _memset(dest, value, count, 2, stream)


def memset_d32(dest, value: int, count: int, stream=None) -> None:
    """Sets `count` 32-bit words of device memory at dest (a DeviceAllocation or address) to
    `value` (0 <= value < 2**32); synchronous without a stream, queued on it with one."""
    _memset(dest, value, count, 4, stream)


class _HostTransfer:
    """A host array that a kernel call copies to the device before the launch (In, InOut) and
    back after it (Out, InOut). The device copy lives for that one call."""

    copy_in = False
    copy_out = False

    def __init__(self, array):
        self.array = host_array(array, writable=self.copy_out, what=type(self).__name__)
        self._allocation: DeviceAllocation | None = None

    def prepare(self, device, stream) -> int:
        self._allocation = DeviceAllocation(device, max(self.array.nbytes, 1))
        if self.copy_in and self.array.nbytes:
            _opkit.copy(device, self._allocation.ptr, self.array.ctypes.data, self.array.nbytes, "htod", stream)
        return self._allocation.ptr

    def finish(self, device, stream) -> None:
        if self.copy_out and self.array.nbytes:
            _opkit.copy(device, self.array.ctypes.data, self._allocation.ptr, self.array.nbytes, "dtoh", stream)

    def release(self) -> None:
        if self._allocation is not None:
            self._allocation.free()
            self._allocation = None


class In(_HostTransfer):
    """Copies a host array to the device before the call."""

    copy_in = True


class Out(_HostTransfer):
    """Copies the device copy back into the host array after the call."""

    copy_out = True


class InOut(_HostTransfer):
    """Copies a host array to the device before the call and back after it."""

    copy_in = True
    copy_out = True
