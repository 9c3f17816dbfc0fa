"""opkit.sha256 and opkit.sha256d: batches of messages hashed where they live.

Input: a [N, L] uint8 array (N messages of L bytes) from any DLPack producer (NumPy, PyTorch,
CuPy, JAX), or a sequence of bytes objects (any lengths), or a flat uint8 array plus offsets
(message i = data[offsets[i]:offsets[i + 1]]). Output: [N, 32] uint8 digests in the input's
framework and on the input's device (allocated by PyTorch or CuPy themselves for their contiguous
[N, L] CUDA arrays hashed on their current stream). CUDA input is hashed on its GPU with no host round trip, on
the producer's current stream; host input is hashed by the best device (the GPU when there is
one, else OpenSSL on all cores) unless device= says otherwise.
"""

from __future__ import annotations

import numpy as np

from . import _opkit
from ._arrays import (
    DeviceArray,
    as_stream,
    borrowed_stream,
    capsule,
    checked_offsets,
    dlpack_device,
    framework_of,
    framework_stream,
    is_dlpack,
    on_cuda,
    to_framework,
    torch_current_stream,
)
from ._devices import cuda_device, get_device

DIGEST_BYTES = 32


def sha256(x, *, offsets=None, device=None, stream=None):
    """SHA-256 of each message of x; see the module documentation for the accepted inputs.

    device: where host data is hashed ("host" for OpenSSL on the host, "cuda", "cuda:N", "cpu" for
        the kernel on the CPU backend, any device name, a Device);
        device data is always hashed on its own GPU.
    stream: for CUDA data, the stream to run on (default: the producer's current stream for
        PyTorch and CuPy, else the legacy default stream).
    """
    return _digests("sha256", x, offsets, device, stream)


def sha256d(x, *, offsets=None, device=None, stream=None):
    """SHA-256(SHA-256(m)) of each message, as Bitcoin hashes; arguments as for sha256."""
    return _digests("sha256d", x, offsets, device, stream)


def _where(device):
    """(Device or None, host_cpu) for the C++ HashOptions."""
    if device is None:
        return None, False
    if isinstance(device, str) and device.strip().lower() == "host":
        return None, True
    return get_device(device), False


def _digests(algo, x, offsets, device, stream):
    where, host_cpu = _where(device)
    if offsets is not None:
        return _variable(algo, _as_array(x, "data"), _as_offsets(offsets), where, host_cpu, stream)
    if isinstance(x, (bytes, bytearray, memoryview, str)):
        raise TypeError(
            f"{algo}: x is one message; pass a sequence of messages, e.g. opkit.{algo}([data]), "
            "or a [N, L] uint8 array"
        )
    if is_dlpack(x) or hasattr(x, "__array_interface__"):
        return _fixed(algo, _as_array(x, "x"), where, host_cpu, stream)
    return _messages(algo, x, where, host_cpu)


def _as_array(x, what):
    if is_dlpack(x):
        return x
    if hasattr(x, "__array_interface__") or hasattr(x, "__array__"):
        return np.asarray(x)
    raise TypeError(f"{what} must be an array (NumPy, PyTorch, CuPy, JAX, ...), got {type(x).__name__}")


def _as_offsets(offsets):
    # CUDA offsets stay where they are (64-bit, or 32-bit ones that the extension widens on the
    # GPU); host ones of any integer type are converted here, e.g. JAX's, which are 32-bit unless
    # jax_enable_x64 is set.
    if is_dlpack(offsets) and on_cuda(offsets):
        return offsets
    return checked_offsets(np.from_dlpack(offsets) if is_dlpack(offsets) else np.asarray(offsets))


def _cuda_stream(x, stream):
    """The stream (opkit.Stream or None) on which to use CUDA array x."""
    device = _opkit.Device.cuda(dlpack_device(x)[1])
    if stream is None:
        handle = framework_stream(x)
        return device, (borrowed_stream(device, handle) if handle is not None else None)
    return device, as_stream(device, stream)


def _fixed(algo, x, where, host_cpu, stream):
    if on_cuda(x):
        if stream is None and where is None and not host_cpu:  # device= is checked on the other path
            out = _into_framework_array(algo, x)
            if out is not None:
                return out
        device, s = _cuda_stream(x, stream)
        handle = None if s is None else s.handle
        out = _opkit.hash_fixed(capsule(x, handle), algo, where, host_cpu, handle)
        return to_framework(DeviceArray(out, device, s), x)
    out = _opkit.hash_fixed(capsule(x), algo, where, host_cpu, None)
    return to_framework(out, x)


def _into_framework_array(algo, x):
    """Digests of a C-contiguous [N, L] uint8 CUDA array of PyTorch or CuPy, written into a
    [N, 32] array that the framework allocates on x's device (its caching allocator, on its
    current stream) and hashed on that current stream: what the registered torch op does, with no
    opkit allocation and no DLPack round trip per call, which made a large batch 20-50% slower
    than its kernel. None for any other array: the DLPack path then takes it (and names what is
    wrong with it). Only for the framework's current stream: memory from a caching allocator is
    tied to the stream it was allocated on."""
    framework = framework_of(x)
    if framework == "torch":
        import torch

        if x.dtype != torch.uint8 or x.dim() != 2 or not x.is_contiguous():
            return None
        rows, length = x.shape
        out = torch.empty((rows, DIGEST_BYTES), dtype=torch.uint8, device=x.device)
        stream = torch_current_stream(x.device.index)
        _opkit.hash_fixed_at(algo, cuda_device(x.device.index), x.data_ptr(), rows, length, out.data_ptr(), stream)
        return out
    if framework == "cupy":
        import cupy

        if x.dtype != cupy.uint8 or x.ndim != 2 or not x.flags.c_contiguous:
            return None
        rows, length = x.shape
        with cupy.cuda.Device(x.device.id):
            out = cupy.empty((rows, DIGEST_BYTES), dtype=cupy.uint8)
            stream = cupy.cuda.get_current_stream().ptr
        _opkit.hash_fixed_at(algo, cuda_device(x.device.id), x.data.ptr, rows, length, out.data.ptr, stream)
        return out
    return None


def _variable(algo, data, offsets, where, host_cpu, stream):
    if on_cuda(data):
        device, s = _cuda_stream(data, stream)
        handle = None if s is None else s.handle
        out = _opkit.hash_offsets(capsule(data, handle), capsule(offsets, handle), algo, where, host_cpu, handle)
        return to_framework(DeviceArray(out, device, s), data)
    out = _opkit.hash_offsets(capsule(data), capsule(offsets), algo, where, host_cpu, None)
    return to_framework(out, data)


def _messages(algo, messages, where, host_cpu):
    try:
        items = list(messages)
    except TypeError:
        raise TypeError(
            f"{algo}: expected a [N, L] uint8 array or a sequence of bytes, got {type(messages).__name__}"
        ) from None
    views = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            raise TypeError(f"{algo}: message #{i} is a str; encode it first (e.g. s.encode())")
        try:
            views.append(memoryview(item).cast("B"))
        except TypeError:
            raise TypeError(f"{algo}: message #{i} is a {type(item).__name__}, not bytes") from None
    if not views:
        return np.empty((0, DIGEST_BYTES), dtype=np.uint8)
    data = np.frombuffer(b"".join(views), dtype=np.uint8)
    lengths = [v.nbytes for v in views]
    if all(n == lengths[0] for n in lengths):
        batch = data.reshape(len(views), lengths[0])
        return _opkit.hash_fixed(capsule(batch), algo, where, host_cpu, None)
    offsets = np.zeros(len(views) + 1, dtype=np.uint64)
    np.cumsum(lengths, out=offsets[1:])
    return _opkit.hash_offsets(capsule(data), capsule(offsets), algo, where, host_cpu, None)
