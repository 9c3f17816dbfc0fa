"""opkit.lz4_compress and opkit.lz4_decompress: standard LZ4 frames (the `.lz4` files of the
`lz4` tool) from and to bytes or 1-D uint8 arrays of any DLPack producer.

bytes in, bytes out; a host array in, a NumPy array out; a CUDA array in, an array on the same
GPU out (in the input's framework), compressed or decompressed there with no host round trip of
the data (the frame's structure and its content checksum are host work: see
include/opkit/ops/lz4.hpp). A list of CUDA arrays of one GPU (or of host arrays with device= the
CPU backend) runs as one batch, one launch per step for all items (nvCOMP's batched case); other
lists run item by item. With offsets=, x is one 1-D uint8 array of items back to back (item i is
x[offsets[i]:offsets[i + 1]]) and the result is (results back to back in one array of x's kind,
their NumPy uint64 offsets): the data + offsets batch form, one batch call.
"""

from __future__ import annotations

import numpy as np

from . import _opkit
from ._arrays import (
    DeviceArray,
    capsule,
    checked_offsets,
    dlpack_device,
    host_copy,
    is_dlpack,
    on_cuda,
    to_framework,
)
from ._devices import get_device

_BLOCK_IDS = {64 << 10: 4, 256 << 10: 5, 1 << 20: 6, 4 << 20: 7}
DEFAULT_MAX_SIZE = _opkit.lz4_default_max_output


def lz4_compress(x, *, block_size=64 << 10, block_checksums=False, content_checksum=True, content_size=False,
                 device=None, offsets=None):
    """One LZ4 frame of x (bytes, or a 1-D uint8 array; a list: one frame each; with offsets: one
    frame per item x[offsets[i]:offsets[i + 1]], returned as (frames, frame_offsets)).

    block_size: 65536, 262144, 1048576 or 4194304 bytes (`lz4 -B4` .. `-B7`).
    device: where host data is compressed (None: liblz4 on the host; "cuda", "cpu", a Device: opkit's
        kernels there); CUDA data is compressed on its own GPU.
    """
    if block_size not in _BLOCK_IDS:
        raise ValueError(f"block_size must be one of {sorted(_BLOCK_IDS)}, got {block_size}")
    options = (_BLOCK_IDS[block_size], bool(block_checksums), bool(content_checksum), bool(content_size))
    if offsets is not None:
        return _packed(x, offsets, device, lambda a, o, dev: _opkit.lz4_compress_packed(a, o, *options, dev))
    return _apply(x, lambda a, dev: _opkit.lz4_compress(a, *options, dev), device,
                  lambda items, dev: _opkit.lz4_compress_batch(items, *options, dev))


def lz4_decompress(frames, *, max_size=DEFAULT_MAX_SIZE, verify=True, device=None, offsets=None):
    """The data of the concatenated LZ4 frames in `frames` (bytes or a 1-D uint8 array; a list:
    each item on its own; with offsets: each frames[offsets[i]:offsets[i + 1]] on its own,
    returned as (data, data_offsets), max_size applying to each item). Decoding more than max_size bytes is an error (opkit.Error), as is every
    malformed frame and every checksum that does not match (verify=False skips block and content
    checksums)."""
    if max_size < 0:
        raise ValueError("max_size must not be negative")
    if offsets is not None:
        return _packed(frames, offsets, device,
                       lambda a, o, dev: _opkit.lz4_decompress_packed(a, o, int(max_size), bool(verify), dev))
    return _apply(frames, lambda a, dev: _opkit.lz4_decompress(a, int(max_size), bool(verify), dev), device,
                  lambda items, dev: _opkit.lz4_decompress_batch(items, int(max_size), bool(verify), dev))


def _where(device):
    """None for the host path (liblz4), else the opkit Device that device= names."""
    host = device is None or (isinstance(device, str) and device.strip().lower() == "host")
    return None if host else get_device(device)


def _apply(x, call, device, batch_call):
    if isinstance(x, (list, tuple)):
        batched = _batched(x, batch_call, device)
        return batched if batched is not None else [_apply(item, call, device, batch_call) for item in x]
    where = _where(device)
    if isinstance(x, (bytes, bytearray, memoryview)):
        out = call(np.frombuffer(x, dtype=np.uint8), where)
        return out.reshape(-1).tobytes()
    if is_dlpack(x) and on_cuda(x):
        gpu = _opkit.Device.cuda(dlpack_device(x)[1])
        return to_framework(DeviceArray(call(capsule(x), where), gpu, None), x)
    array = np.from_dlpack(x) if is_dlpack(x) else np.asarray(x)
    if array.dtype != np.uint8:
        raise TypeError(f"expected uint8 data, got dtype {array.dtype}")
    return to_framework(call(np.ascontiguousarray(array).reshape(-1), where).reshape(-1), x)


def _batched(items, batch_call, device):
    """The items as one batch call, where they can be one: CUDA arrays of one GPU (device= unset),
    or uint8 host arrays with device= a backend whose memory is host memory (the CPU backend).
    None otherwise: the items then run one by one, each with its own checks and errors."""
    if not items or not all(is_dlpack(item) for item in items):
        return None
    where = _where(device)
    if all(on_cuda(item) for item in items):
        ordinals = {dlpack_device(item)[1] for item in items}
        if where is not None or len(ordinals) != 1:
            return None
        gpu = _opkit.Device.cuda(ordinals.pop())
        results = batch_call([capsule(item) for item in items], None)
        return [to_framework(DeviceArray(result, gpu, None), item) for result, item in zip(results, items)]
    if where is None or where.is_gpu or any(on_cuda(item) for item in items):
        return None
    arrays = [np.from_dlpack(item) for item in items]
    if any(array.dtype != np.uint8 for array in arrays):
        return None
    results = batch_call([np.ascontiguousarray(array).reshape(-1) for array in arrays], where)
    return [to_framework(result.reshape(-1), item) for result, item in zip(results, items)]


def _packed(x, offsets, device, call):
    """The data + offsets form: x a 1-D uint8 array (CUDA, or host with device= the CPU backend),
    offsets host or CUDA integers; one batch call. Returns (results in x's kind, uint64 offsets)."""
    if isinstance(x, (bytes, bytearray, memoryview)):
        x = np.frombuffer(x, dtype=np.uint8)
    if not is_dlpack(x):
        x = np.asarray(x)
    where = _where(device)
    if on_cuda(x):
        gpu = _opkit.Device.cuda(dlpack_device(x)[1])
        data, out = capsule(x), (lambda result: to_framework(DeviceArray(result, gpu, None), x))
    else:
        if where is None or where.is_gpu:
            raise ValueError("host data with offsets= runs on the CPU backend (device='cpu'); "
                             "for liblz4 on the host pass a list of arrays")
        array = np.from_dlpack(x) if not isinstance(x, np.ndarray) else x
        if array.dtype != np.uint8:
            raise TypeError(f"expected uint8 data, got dtype {array.dtype}")
        data, out = np.ascontiguousarray(array).reshape(-1), (lambda result: to_framework(result.reshape(-1), x))
    result, result_offsets = call(data, _host_offsets(offsets), where)
    return out(result), result_offsets


def _host_offsets(offsets) -> np.ndarray:
    array = host_copy(offsets) if is_dlpack(offsets) and on_cuda(offsets) else (
        np.from_dlpack(offsets) if is_dlpack(offsets) else np.asarray(offsets))
    if array.ndim != 1:
        raise TypeError(f"offsets must be a 1-D integer array, got {array.ndim}-D")
    return checked_offsets(array)
