"""opkit.encrypt and opkit.decrypt: AES-CTR, AES-GCM, ChaCha20 and ChaCha20-Poly1305, byte-exact
with OpenSSL's ciphers of the same names, run where the data lives.

Data: bytes (the result is bytes), or a C-contiguous uint8 array from any DLPack producer (NumPy,
PyTorch, CuPy, JAX): the result has the input's framework, shape and device. CUDA data is
encrypted on its GPU (constant-time kernels) with no host round trip, on the producer's current
stream; host data goes through OpenSSL on all cores unless device= names a device ("cpu" runs the
kernel source on the CPU backend, "cuda" copies it to the GPU and back).

One message: key is bytes. A batch: x is [N, L], key is [N, key_bytes] and iv (or nonce) is
[N, iv_bytes], one key and IV per row: host arrays, or, for CUDA data, CUDA arrays on the data's
GPU, which the kernels read in place (no copy to the host and back; exported on the same stream as
the data, and not wiped: they are the caller's). chacha20's 16-byte IVs on the GPU have their
counter words checked there, which waits for that check; 12-byte nonces (counter=) need none.

AEADs (aes-*-gcm, chacha20-poly1305) take aad= and return (ciphertext, tag) from encrypt (tag: 16
bytes, or [N, 16] uint8 for a batch); decrypt takes tag= and raises opkit.AuthenticationError
(failed_indices: the failing rows) when it does not verify, releasing no plaintext (the failing
rows are zeroed). A batch's tag= may be a CUDA array on the data's GPU: compared there, in place.

IVs as OpenSSL takes them: aes-*-ctr 16 bytes (the initial counter block); aes-*-gcm any length
>= 1 (12 recommended); chacha20 16 bytes (32-bit little-endian counter || 96-bit nonce) or a
12-byte RFC 8439 nonce with counter=; chacha20-poly1305 a 12-byte nonce.
"""

from __future__ import annotations

import numpy as np

from . import _opkit
from ._arrays import DeviceArray, capsule, dlpack_device, is_dlpack, on_cuda, to_framework
from ._devices import get_device
from ._hash import _cuda_stream

_BYTES = (bytes, bytearray, memoryview)


def encrypt(x, *, cipher, key, iv=None, nonce=None, aad=b"", device=None, stream=None, counter=0):
    """Encrypts x; returns the ciphertext, or (ciphertext, tag) for an AEAD."""
    return _run(x, cipher, True, key, _one_iv(iv, nonce), aad, None, device, stream, counter)


def decrypt(x, *, cipher, key, iv=None, nonce=None, aad=b"", tag=None, device=None, stream=None, counter=0):
    """Decrypts x (verifying tag= for an AEAD); returns the plaintext."""
    info = _opkit.cipher_info(cipher)
    if info["aead"] and tag is None:
        raise ValueError(f"decrypt: {cipher} needs the tag (tag=)")
    if not info["aead"] and tag is not None:
        raise ValueError(f"decrypt: {cipher} has no tag")
    return _run(x, cipher, False, key, _one_iv(iv, nonce), aad, tag, device, stream, counter)


def _one_iv(iv, nonce):
    if (iv is None) == (nonce is None):
        raise ValueError("pass exactly one of iv= and nonce=")
    return iv if iv is not None else nonce


def _device(device):
    if device is None or (isinstance(device, str) and device.strip().lower() == "host"):
        return None
    return get_device(device)


def _host_uint8(value, what):
    """A C-contiguous host uint8 array from bytes or a host array."""
    if isinstance(value, _BYTES):
        return np.frombuffer(bytes(value), dtype=np.uint8)
    if is_dlpack(value) and on_cuda(value):
        raise TypeError(f"{what} must be host memory (bytes or a host array), not a CUDA array")
    array = np.from_dlpack(value) if is_dlpack(value) else np.asarray(value)
    if array.dtype != np.uint8:
        raise TypeError(f"{what} must be uint8, got dtype {array.dtype}")
    return np.ascontiguousarray(array)


def _batch_input(value, what, data, handle):
    """A batch's keys, IVs or expected tags for the extension: a DLPack capsule of a CUDA array on
    the data's GPU (exported on the stream the data is used on), else a C-contiguous host uint8
    array."""
    if not (is_dlpack(value) and on_cuda(value)):
        return _host_uint8(value, what)
    if not on_cuda(data):
        raise TypeError(f"{what} is a CUDA array but the data is host memory: pass host {what}s (or CUDA data)")
    if dlpack_device(value)[1] != dlpack_device(data)[1]:
        raise ValueError(
            f"{what} lives on CUDA device {dlpack_device(value)[1]}, the data on CUDA device "
            f"{dlpack_device(data)[1]}: they must be on the same GPU"
        )
    return capsule(value, handle)


def _run(x, cipher, encrypt_, key, iv, aad, tag, device, stream, counter):
    where = _device(device)
    as_bytes = isinstance(x, _BYTES)
    if isinstance(x, str):
        raise TypeError("x is a str; encode it first (e.g. s.encode())")
    data = np.frombuffer(bytes(x), dtype=np.uint8) if as_bytes else x
    if not is_dlpack(data):
        data = np.asarray(data)
    batch = not isinstance(key, _BYTES) and getattr(key, "ndim", 1) == 2
    info = _opkit.cipher_info(cipher)
    aead = info["aead"]
    handle, s, gpu = None, None, None
    if on_cuda(data):
        gpu, s = _cuda_stream(data, stream)
        handle = None if s is None else s.handle
    if batch:
        keys, ivs = _batch_input(key, "key", data, handle), _batch_input(iv, "iv", data, handle)
        # Expected tags on the data's GPU are compared there (only the verdict comes back).
        tags = None if tag is None else _batch_input(tag, "tag", data, handle)
        out, new_tags = _opkit.cipher_batch(
            capsule(data, handle), cipher, encrypt_, keys, ivs, tags, where, handle, counter
        )
    else:
        key, iv, aad = (_host_uint8(v, what).tobytes() for v, what in ((key, "key"), (iv, "iv"), (aad, "aad")))
        expected = None if tag is None else _host_uint8(tag, "tag").tobytes()
        out, new_tags = _opkit.cipher_bulk(
            capsule(data, handle), cipher, encrypt_, key, iv, aad, expected, 16, where, handle, counter
        )
    result = _shaped(out, data, gpu, s)
    if as_bytes:
        result = result.tobytes()
    if not (aead and encrypt_):
        return result
    if batch:
        return result, np.frombuffer(new_tags, dtype=np.uint8).reshape(-1, 16).copy()
    return result, new_tags


def _shaped(out, like, gpu, stream):
    """The extension's output in the framework and shape of `like`."""
    if gpu is not None:
        return to_framework(DeviceArray(out, gpu, stream), like)
    shape = tuple(like.shape) if hasattr(like, "shape") else (-1,)
    return to_framework(np.asarray(out).reshape(shape), like)
