"""Arrays and streams at the boundary with other frameworks, through the DLPack protocol.

opkit consumes an array by calling its __dlpack__(stream=S) with the stream S on which opkit will
use it, so the producer orders its pending work before S (the protocol's contract); it produces
arrays as DeviceArray, whose __dlpack__ does the same for the consumer's stream.
"""

from __future__ import annotations

import atexit
import sys

import numpy as np

from . import _opkit
from ._opkit import Device, Stream

# DLPack device types (dlpack.h).
DL_CPU, DL_CUDA, DL_CUDA_HOST, DL_CUDA_MANAGED = 1, 2, 3, 13
_HOST_TYPES = (DL_CPU, DL_CUDA_HOST)
_CUDA_TYPES = (DL_CUDA, DL_CUDA_MANAGED)


def is_dlpack(obj) -> bool:
    return hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__")


def dlpack_device(obj) -> tuple[int, int]:
    device_type, device_id = obj.__dlpack_device__()
    return int(device_type), int(device_id)


def on_cuda(obj) -> bool:
    return dlpack_device(obj)[0] in _CUDA_TYPES


def on_host(obj) -> bool:
    return dlpack_device(obj)[0] in _HOST_TYPES


def protocol_stream(handle: int | None) -> int | None:
    """The value of __dlpack__'s stream argument that names the CUDA stream `handle`
    (0, the legacy default stream, is spelled 1 in the protocol)."""
    if handle is None or handle == 0:
        return 1
    return handle


def capsule(obj, stream_handle: int | None = None):
    """Consumes obj through DLPack. For CUDA memory, `stream_handle` is the CUstream opkit will
    use the array on (None or 0: the legacy default stream); host memory takes no stream."""
    kwargs = {}
    if on_cuda(obj):
        kwargs["stream"] = protocol_stream(stream_handle)
    try:
        return obj.__dlpack__(max_version=(1, 0), **kwargs)
    except TypeError:
        # Producers older than DLPack 1.0 (array API 2023) know no max_version.
        return obj.__dlpack__(**kwargs)


def framework_of(obj) -> str:
    """The top-level module of obj's type: 'numpy', 'torch', 'cupy', 'jaxlib', ..."""
    return type(obj).__module__.split(".")[0]


def to_framework(result, like):
    """Converts an opkit result (a NumPy array or a DeviceArray) to the framework of `like`."""
    framework = framework_of(like)
    if framework == "torch":
        import torch

        return torch.from_dlpack(result)
    if framework == "cupy":
        import cupy

        return cupy.from_dlpack(result)
    if framework in ("jax", "jaxlib"):
        import jax.numpy as jnp

        return jnp.from_dlpack(result)
    if framework == "numpy" or isinstance(result, np.ndarray):
        return result if isinstance(result, np.ndarray) else np.from_dlpack(result)
    return result


_torch_raw_stream = None  # torch._C._cuda_getCurrentRawStream, looked up once


def torch_raw_stream_lookup():
    """A function of a CUDA device index giving the handle of torch's current stream there:
    torch._C._cuda_getCurrentRawStream where torch has it. torch.cuda.current_stream() builds a
    Stream object per call, microseconds of a small op's time; the raw handle is what torch's own
    generated code (inductor) reads instead."""
    global _torch_raw_stream
    if _torch_raw_stream is None:
        import torch

        _torch_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
            lambda index: torch.cuda.current_stream(index).cuda_stream
        )
    return _torch_raw_stream


def torch_current_stream(device_index: int) -> int:
    """The handle of torch's current stream on CUDA device `device_index`."""
    return (_torch_raw_stream or torch_raw_stream_lookup())(device_index)


def torch_cuda_tensor(obj):
    """obj when it is a PyTorch CUDA tensor, else None; never imports torch (a program holding a
    tensor has). Such tensors take launches' fast path: their address, device and layout read
    directly rather than through a DLPack capsule per call (tens of microseconds in torch)."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(obj, torch.Tensor) or not obj.is_cuda:
        return None
    return obj


_borrowed_streams: dict = {}


def borrowed_stream(device: Device, handle: int) -> Stream:
    """device.borrow_stream(handle), made once per (device, handle): a wrapper owns nothing, and
    making one per launch costs a small launch microseconds."""
    key = (device.ordinal, handle)
    stream = _borrowed_streams.get(key)
    if stream is None:
        stream = _borrowed_streams.setdefault(key, device.borrow_stream(handle))
    return stream


@atexit.register
def release_borrowed_streams() -> None:
    """Lets the kept wrappers go (at interpreter exit, while the extension still exists)."""
    _borrowed_streams.clear()


def framework_stream(obj) -> int | None:
    """The producer's current CUDA stream for a CUDA array of PyTorch or CuPy, else None."""
    framework = framework_of(obj)
    device_id = dlpack_device(obj)[1]
    if framework == "torch":
        return torch_current_stream(device_id)
    if framework == "cupy":
        import cupy

        with cupy.cuda.Device(device_id):
            return cupy.cuda.get_current_stream().ptr
    return None


def as_stream(device: Device, stream) -> Stream | None:
    """Resolves stream= : None (the device's default stream), an opkit Stream, a raw CUstream
    integer, any object with __cuda_stream__ (the CUDA stream protocol), a torch.cuda.Stream
    (.cuda_stream) or a CuPy stream (.ptr)."""
    if stream is None:
        return None
    if isinstance(stream, Stream):
        if stream.device != device:
            raise ValueError(f"stream {stream!r} belongs to another device than {device!r}")
        return stream
    if isinstance(stream, bool):
        raise TypeError("stream must be an opkit.Stream, a CUDA stream object or handle, not a bool")
    if isinstance(stream, int):
        return device.borrow_stream(stream)
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:  # the CUDA stream protocol (cuda.core's IsStreamT): (version 0, handle)
        value = protocol() if callable(protocol) else protocol
        if not (isinstance(value, tuple) and len(value) == 2 and all(type(v) is int for v in value)):
            raise TypeError(f"{type(stream).__name__}.__cuda_stream__ must give (version, handle) ints, got {value!r}")
        if value[0] != 0:
            raise TypeError(f"{type(stream).__name__}.__cuda_stream__ is protocol version {value[0]}; opkit reads 0")
        return device.borrow_stream(value[1])
    for attribute in ("cuda_stream", "ptr", "handle"):
        handle = getattr(stream, attribute, None)
        if isinstance(handle, int):
            return device.borrow_stream(handle)
    raise TypeError(
        f"stream must be an opkit.Stream, a torch.cuda.Stream, a CuPy stream or a CUstream integer, "
        f"not {type(stream).__name__}"
    )


def stream_handle(stream: Stream | None) -> int:
    return 0 if stream is None else stream.handle


# DLPack dtype codes (dlpack.h) <-> NumPy kinds.
_DL_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
_NUMPY_KINDS = {code: kind for kind, code in _DL_CODES.items()}


def dlpack_dtype(dtype) -> tuple[int, int]:
    """(DLPack dtype code, bits) of a NumPy dtype."""
    dt = np.dtype(dtype)
    if dt.kind not in _DL_CODES:
        raise TypeError(f"dtype {dt} has no DLPack equivalent (integers, floats, complex and bool do)")
    return _DL_CODES[dt.kind], dt.itemsize * 8


def numpy_dtype(code: int, bits: int) -> np.dtype:
    if code not in _NUMPY_KINDS or bits % 8:
        raise TypeError(f"DLPack dtype code {code} with {bits} bits has no NumPy equivalent")
    kind = _NUMPY_KINDS[code]
    return np.dtype(bool) if kind == "b" else np.dtype(f"{kind}{bits // 8}")


def is_c_contiguous(shape, strides) -> bool:
    """Whether DLPack shape and strides (in elements) lay the array out C-contiguously (an empty
    array always is: it has no element to place)."""
    if 0 in shape:
        return True
    expected = 1
    for size, stride in reversed(list(zip(shape, strides))):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def checked_offsets(array: np.ndarray) -> np.ndarray:
    """Host offsets (any integer dtype, e.g. JAX's 32-bit ones) as contiguous uint64."""
    if array.dtype.kind not in "iu":
        raise TypeError(f"offsets must be integers, got dtype {array.dtype}")
    if array.size and array.min() < 0:
        raise ValueError("offsets must not be negative")
    return np.ascontiguousarray(array, dtype=np.uint64)


def host_copy(obj) -> np.ndarray:
    """A NumPy copy of a C-contiguous CUDA array of any DLPack producer (small arrays the host
    needs, such as offsets): consumed on the legacy default stream, so the producer's pending
    writes come first, and copied synchronously."""
    dl = capsule(obj, None)
    address, _, device_id, shape, strides, (code, bits, lanes) = _opkit.array_info(dl)
    if lanes != 1:
        raise TypeError("vector dtypes (DLPack lanes > 1) have no NumPy equivalent")
    if not is_c_contiguous(shape, strides):
        raise ValueError("the array is not C-contiguous; pass a contiguous copy")
    host = np.empty(shape, dtype=numpy_dtype(code, bits))
    if host.nbytes:
        _opkit.copy(Device.cuda(device_id), host.ctypes.data, address, host.nbytes, "dtoh")
    del dl  # the producer's array may be released only after the copy
    return host


class DeviceArray:
    """An array opkit allocated on a device, handed to any framework through DLPack:
    torch.from_dlpack(a), cupy.from_dlpack(a), jax.numpy.from_dlpack(a); a.get() copies it to a
    NumPy array; kernels take it as a pointer. The memory lives until the last user lets go."""

    def __init__(self, array, device: Device, stream: Stream | None):
        self._array = array  # nanobind ndarray: owns the allocation, implements DLPack
        self._device = device
        self._stream = stream
        address, _, _, shape, _, (code, bits, _) = _opkit.array_info(array.__dlpack__())
        self.ptr = address
        self.shape = tuple(shape)
        self.dtype = numpy_dtype(code, bits)

    @property
    def device(self) -> Device:
        return self._device

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self._order_before(stream)
        kwargs = {}
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        return self._array.__dlpack__(**kwargs)

    def _order_before(self, consumer) -> None:
        # The protocol: the data must be ready for work the consumer queues on its stream (None
        # means the legacy default stream; -1 asks for no synchronization). Same stream: already
        # ordered; another stream: it waits for an event recorded here, the host does not.
        if consumer == -1 or not self._device.is_gpu:
            return
        producer, wanted = protocol_stream(stream_handle(self._stream)), protocol_stream(consumer)
        if producer != wanted:
            written = self._device.create_event().record(self._stream or self._device.default_stream())
            self._device.borrow_stream(0 if wanted == 1 else wanted).wait_event(written)

    @property
    def __cuda_array_interface__(self) -> dict:
        """Numba's CUDA Array Interface (version 3), for consumers that read it instead of DLPack
        (Numba, older CuPy and PyCUDA code). Only on a GPU: CPU-backend memory is host memory."""
        if not self._device.is_gpu:
            raise AttributeError("__cuda_array_interface__: this array is host memory (CPU backend); use DLPack")
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ptr, False),
            "strides": None,
            "version": 3,
            # The consumer orders its work after this stream (1: the legacy default stream).
            "stream": protocol_stream(stream_handle(self._stream)),
        }

    def synchronize(self) -> None:
        """Waits for the work queued on the stream that writes this array."""
        (self._stream or self._device.default_stream()).synchronize()

    def get(self) -> np.ndarray:
        """A NumPy copy of the array (waits for the work that writes it)."""
        host = np.empty(self.shape, dtype=self.dtype)
        if host.nbytes:
            self.synchronize()
            _opkit.copy(self._device, host.ctypes.data, self.ptr, host.nbytes, "dtoh")
        return host

    def __array__(self, dtype=None, copy=None):
        host = self.get()
        return host if dtype is None else host.astype(dtype)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<opkit.DeviceArray shape={self.shape} dtype={self.dtype} on {self._device!r}>"


def empty(shape, dtype=np.uint8, device=None) -> DeviceArray:
    """An uninitialised C-contiguous array on the device (default: opkit.default_device())."""
    from ._devices import get_device

    dev = get_device(device)
    dims = [int(shape)] if isinstance(shape, (int, np.integer)) else [int(d) for d in shape]
    if any(d < 0 for d in dims):
        raise ValueError(f"shape must not be negative, got {tuple(dims)}")
    code, bits = dlpack_dtype(dtype)
    return DeviceArray(_opkit.empty(dev, dims, code, bits), dev, None)


def to_device(host, device=None, stream=None) -> DeviceArray:
    """A device copy of a host array (PyCUDA's gpuarray.to_gpu). With a stream, the copy is queued
    on it and the DeviceArray is ordered on that stream: the copy may read `host` when it runs, so
    keep it unchanged until the stream has passed it (a contiguous copy that this call makes of a
    strided `host` is kept alive by the DeviceArray)."""
    from ._devices import get_device

    array = np.ascontiguousarray(host)
    dev = get_device(device)
    out = empty(array.shape, array.dtype, dev)
    s = as_stream(dev, stream)
    out._stream = s
    if array.nbytes:
        _opkit.copy(dev, out.ptr, array.ctypes.data, array.nbytes, "htod", s)
        if s is not None and array is not host:
            out._copied_from = array  # read by the queued copy, perhaps after this returns
    return out
