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
    """Makes `device` (a Device, "cuda", "cuda:N", "cpu" or a CUDA ordinal) the default."""
    global _default
    chosen = get_device(device)
    with _lock:
        _default = chosen
    return chosen


def get_device(spec=None) -> Device:
    """Resolves None (the default device), a Device, "cuda", "cuda:N", "cpu" or an int ordinal."""
    if spec is None:
        return default_device()
    if isinstance(spec, Device):
        return spec
    if isinstance(spec, bool):
        raise TypeError("a device is a Device, 'cuda', 'cuda:N', 'cpu' or an int, not a bool")
    if isinstance(spec, int):
        return _opkit.Device.cuda(spec)
    if isinstance(spec, str):
        text = spec.strip().lower()
        if text == "cpu":
            return _opkit.Device.cpu()
        if text == "cuda":
            return _opkit.Device.cuda(0)
        if text.startswith("cuda:") and text[5:].isdigit():
            return _opkit.Device.cuda(int(text[5:]))
        raise ValueError(f"unknown device {spec!r}: use 'cuda', 'cuda:N' or 'cpu'")
    raise TypeError(f"a device is a Device, 'cuda', 'cuda:N', 'cpu' or an int, not {type(spec).__name__}")


def synchronize(device=None) -> None:
    """Waits until all work queued on the device has finished."""
    get_device(device).synchronize()
