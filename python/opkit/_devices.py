"""Device selection for the Python API: the process-wide default device (what PyCUDA calls the
current context) and the ways a caller may name a device."""

from __future__ import annotations

import threading

from . import _opkit
from ._opkit import Device

_lock = threading.Lock()
_default: Device | None = None


def devices() -> list[Device]:
    """Every device of every available backend, GPUs first (possibly empty)."""
    return _opkit.Device.all()


def default_device() -> Device:
    """The device used when none is named: the first CUDA GPU if one works, else the CPU backend.

    Raises opkit.Error (kind "unavailable") saying why when there is neither.
    """
    global _default
    with _lock:
        if _default is None:
            _default = _opkit.Device.best()
        return _default


def set_default_device(device) -> Device:
    """Makes `device` (a Device, a name such as "cuda", "cuda:N", "cpu", or a CUDA ordinal) the default."""
    global _default
    chosen = get_device(device)
    with _lock:
        _default = chosen
    return chosen


def get_device(spec=None) -> Device:
    """Resolves None (the default device), a Device, a device name as the CLI takes it ("auto",
    "cuda", "cuda:N", "cpu" = the CPU backend, any registered backend's "name[:N]"; docs/cli.md,
    "Devices") or an int CUDA ordinal."""
    if spec is None:
        return default_device()
    if isinstance(spec, Device):
        return spec
    if isinstance(spec, bool):
        raise TypeError("a device is a Device, a name such as 'cuda:0' or 'cpu', or an int, not a bool")
    if isinstance(spec, int):
        return _opkit.Device.cuda(spec)
    if isinstance(spec, str):
        text = spec.strip().lower()
        if text == "host":
            raise ValueError("'host' is an operator's native CPU path (sha256, mine), not a device; use 'cpu' for the CPU backend")
        try:
            return _opkit.Device.parse(text)
        except _opkit.Error as e:
            if e.kind == "invalid_argument":
                raise ValueError(f"unknown device {spec!r}: {e.message}") from None
            raise
    raise TypeError(f"a device is a Device, a name such as 'cuda:0' or 'cpu', or an int, not {type(spec).__name__}")


_cuda_devices: dict[int, Device] = {}


def cuda_device(index: int) -> Device:
    """The Device of CUDA ordinal `index`, made once and then reused (per-call paths such as the
    torch ops and framework tensors' hashes look it up on every call)."""
    device = _cuda_devices.get(index)
    if device is None:
        device = _cuda_devices.setdefault(index, _opkit.Device.cuda(index))
    return device


def release_cuda_devices() -> None:
    """Lets go of the reused Devices (at interpreter exit, after what was made on them)."""
    _cuda_devices.clear()


def backends() -> list[dict]:
    """Every registered backend: {"name", "available", "reason", "is_gpu"}."""
    return _opkit.backends()


def synchronize(device=None) -> None:
    """Waits until all work queued on the device has finished."""
    get_device(device).synchronize()


def ExternalStream(handle: int, device=None):  # noqa: N802 -- CuPy's name for the same thing
    """A stream created elsewhere, by its native handle (a CUstream as an int; 0 is the legacy
    default stream), borrowed: opkit queues work on it and never destroys it, so it must outlive
    the returned object's use. device: the device the stream belongs to (default: the default
    device). Usable as stream= and in `with stream:`."""
    if isinstance(handle, bool) or not isinstance(handle, int):
        raise TypeError(f"handle must be the stream's native handle as an int, got {type(handle).__name__}")
    return get_device(device).borrow_stream(handle)
