"""opkit operators and user kernels as PyTorch operators (torch.library), for torch.compile and
CUDA graphs. Importing this module imports torch; `import opkit` alone never does.

- torch.ops.opkit.sha256(x) / sha256d(x): a [N, L] uint8 tensor -> [N, 32] uint8 digests, on x's
  device. sha256_out(x, out) / sha256d_out(x, out) write a preallocated [N, 32] tensor instead
  (what a CUDA graph replays). sha256_offsets(data, offsets) / sha256d_offsets: message i is
  data[offsets[i]:offsets[i + 1]], offsets an int64 tensor of N + 1 entries.
  The Python wrappers sha256(x, offsets=None, out=None) / sha256d pick the right one.
- torch.ops.opkit.encrypt(x, cipher, key, iv, counter=0) / encrypt_out(..., out, counter=0): AES-CTR
  and ChaCha20 (their own inverse); aead_encrypt(x, cipher, key, iv, aad) -> (ciphertext, tag) and
  aead_decrypt(x, cipher, key, iv, aad, tag), raising opkit.AuthenticationError for a bad tag.
  Keys, IVs and AAD are CPU uint8 tensors ([N, ...] for a batch of [N, L] rows; a CUDA batch's may
  also live on the data's device, read there in place); tags live on the data's device
  (aead_decrypt also takes a CPU tag). The Python
  wrappers encrypt(x, cipher=, key=, iv=, ...) / decrypt(...) pick the op and also take bytes.
- torch.ops.opkit.lz4_compress(x, block_size=65536) / lz4_decompress(frame, max_size=1 GiB): LZ4
  frames, 1-D outputs of data-dependent length (unbacked sizes under torch.compile).
- kernel_op(name, source, kernel=, outputs=, grid=, block=): a CUDA C++ kernel as a registered op.

CUDA work is queued on torch's current stream of the tensors' device, without a host sync (except
the variable-length hash, which waits to check the offsets, AEAD decryption, which waits for the
verdict, chacha20 batches with 16-byte IVs on the GPU, which wait for the device check of their
counters, and LZ4, whose frame structure is host work), and outputs come from torch's caching allocator
(except LZ4's CUDA outputs, opkit allocations handed over by DLPack). CPU tensors are hashed by OpenSSL on the host; kernel ops run on opkit's CPU backend.
None of these ops has a gradient: hashes, ciphers and LZ4 take uint8 tensors, which cannot require one, and
backward through a kernel op's outputs raises an error naming the op.
"""

from __future__ import annotations

import atexit
import inspect
import threading
import weakref

import numpy as np
import torch

from . import _opkit
from ._arrays import borrowed_stream, release_borrowed_streams, torch_current_stream, torch_raw_stream_lookup
from ._devices import _cuda_devices, cuda_device, release_cuda_devices
from ._kernels import _INT32, _INT32_STRUCT, _POINTER_STRUCT, SourceModule, _Call, _dim3

__all__ = ["decrypt", "encrypt", "kernel_op", "lz4_compress", "lz4_decompress", "sha256", "sha256d"]

DIGEST_BYTES = 32

def _opkit_device(device: torch.device):
    """The opkit Device for a torch CUDA device."""
    return cuda_device(device.index if device.index is not None else torch.cuda.current_device())


def _stream_of(device: torch.device) -> int:
    """The handle of torch's current stream on a CUDA device."""
    return torch_current_stream(device.index if device.index is not None else torch.cuda.current_device())


# ---- SHA-256 ----


_UINT8 = torch.uint8  # dtypes are singletons: `is` compares them in one step
_current_raw_stream = torch_raw_stream_lookup()  # CUDA device index -> torch's current stream handle


def _check_batch(op: str, x: torch.Tensor) -> None:
    if x.dtype is not _UINT8 or x.dim() != 2:
        raise ValueError(f"{op}: expected a 2-D [N, L] uint8 tensor, got {x.dim()}-D {x.dtype}")
    if not x.is_contiguous():
        raise ValueError(f"{op}: the tensor is not contiguous; pass x.contiguous()")


def _check_out(op: str, x: torch.Tensor, out: torch.Tensor, rows: int) -> None:
    if out.dtype is not _UINT8 or out.shape != (rows, DIGEST_BYTES):
        raise ValueError(f"{op}: out must be a [{rows}, 32] uint8 tensor, got {tuple(out.shape)} {out.dtype}")
    if not out.is_contiguous():
        raise ValueError(f"{op}: out is not contiguous")
    # get_device(): -1 on the CPU, the ordinal on CUDA (no torch.device object per call).
    if out.get_device() != x.get_device():
        raise ValueError(f"{op}: out lives on {out.device}, the data on {x.device}")


def _hash_fixed(algo: str, x: torch.Tensor, out: torch.Tensor) -> None:
    rows, length = x.shape
    index = x.get_device()
    if index >= 0:  # CUDA
        device = _cuda_devices.get(index)  # cuda_device(index), without the call once made
        if device is None:
            device = cuda_device(index)
        _opkit.hash_fixed_at(algo, device, x.data_ptr(), rows, length, out.data_ptr(), _current_raw_stream(index))
    else:
        _opkit.hash_fixed_at(algo, None, x.data_ptr(), rows, length, out.data_ptr(), 0)


def _check_offsets(op: str, data: torch.Tensor, offsets: torch.Tensor) -> None:
    if data.dtype != torch.uint8 or data.dim() != 1:
        raise ValueError(f"{op}: data must be a 1-D uint8 tensor, got {data.dim()}-D {data.dtype}")
    if offsets.dtype != torch.int64 or offsets.dim() != 1 or offsets.shape[0] == 0:
        raise ValueError(
            f"{op}: offsets must be a 1-D int64 tensor of N + 1 entries, got {tuple(offsets.shape)} {offsets.dtype}"
        )
    if not data.is_contiguous() or not offsets.is_contiguous():
        raise ValueError(f"{op}: data and offsets must be contiguous")
    if offsets.device != data.device:
        raise ValueError(f"{op}: offsets live on {offsets.device}, the data on {data.device}")


def _hash_offsets(algo: str, data: torch.Tensor, offsets: torch.Tensor, out: torch.Tensor) -> None:
    rows = offsets.shape[0] - 1
    if rows == 0:
        return
    # int64 offsets are read as uint64: a negative one is a huge one, which the operator refuses.
    if data.is_cuda:
        _opkit.hash_offsets_at(algo, _opkit_device(data.device), data.data_ptr(), data.numel(), offsets.data_ptr(),
                               rows, out.data_ptr(), _stream_of(data.device))
    else:
        _opkit.hash_offsets_at(algo, None, data.data_ptr(), data.numel(), offsets.data_ptr(), rows, out.data_ptr(), 0)


# Ops are defined with the lower-level torch.library API rather than custom_op: its dispatch
# costs a third as much per call (measured on CPU tensors: 8.5 us against 23 us for a one-row
# sha256_out), which is what a small batch pays. Each op has the same CPU and CUDA kernel (it
# tells the devices apart), a fake kernel for torch.compile, and no autograd kernel.
_libraries: dict = {}  # namespace -> torch.library.Library; an op lives while its library does


def _split_name(qualified: str) -> tuple[str, str]:
    namespace, _, op = qualified.partition("::")
    if not namespace or not op.isidentifier():
        raise ValueError(f"an op name is 'namespace::name', got {qualified!r}")
    return namespace, op


def _define(qualified: str, signature: str, kernel, fake):
    """Defines the op namespace::name with `signature` (schema without the name), one kernel for
    CPU and CUDA tensors and a fake kernel; returns its OpOverload."""
    namespace, op = _split_name(qualified)
    library = _libraries.get(namespace)
    if library is None:
        library = _libraries.setdefault(namespace, torch.library.Library(namespace, "FRAGMENT"))
    library.define(op + signature)
    for dispatch_key in ("CPU", "CUDA"):
        library.impl(op, kernel, dispatch_key)
    torch.library.register_fake(qualified, fake, lib=library)
    return getattr(getattr(torch.ops, namespace), op).default


def _define_hash(algo: str):
    """Registers opkit::<algo>, opkit::<algo>_out and opkit::<algo>_offsets; returns them."""
    name, out_name, offsets_name = f"opkit::{algo}", f"opkit::{algo}_out", f"opkit::{algo}_offsets"

    def fixed(x):
        _check_batch(name, x)
        out = x.new_empty((x.shape[0], DIGEST_BYTES))  # x is uint8: so is out, on x's device
        _hash_fixed(algo, x, out)
        return out

    def fixed_fake(x):
        _check_batch(name, x)
        return x.new_empty((x.shape[0], DIGEST_BYTES))

    def fixed_out(x, out):
        _check_batch(out_name, x)
        _check_out(out_name, x, out, x.shape[0])
        _hash_fixed(algo, x, out)

    def fixed_out_fake(x, out):
        _check_batch(out_name, x)
        _check_out(out_name, x, out, x.shape[0])

    def variable(data, offsets):
        _check_offsets(offsets_name, data, offsets)
        out = torch.empty((offsets.shape[0] - 1, DIGEST_BYTES), dtype=torch.uint8, device=data.device)
        _hash_offsets(algo, data, offsets, out)
        return out

    def variable_fake(data, offsets):
        _check_offsets(offsets_name, data, offsets)
        return data.new_empty((offsets.shape[0] - 1, DIGEST_BYTES))

    return (
        _define(name, "(Tensor x) -> Tensor", fixed, fixed_fake),
        _define(out_name, "(Tensor x, Tensor(a!) out) -> ()", fixed_out, fixed_out_fake),
        _define(offsets_name, "(Tensor data, Tensor offsets) -> Tensor", variable, variable_fake),
    )


_sha256_ops = _define_hash("sha256")
_sha256d_ops = _define_hash("sha256d")


def _call(ops, x, offsets, out):
    fixed, fixed_out, variable = ops
    if offsets is not None:
        if out is not None:
            raise ValueError("out= is for [N, L] batches; the variable-length form allocates its output")
        return variable(x, offsets)
    if out is None:
        return fixed(x)
    fixed_out(x, out)
    return out


def sha256(x: torch.Tensor, *, offsets: torch.Tensor | None = None, out: torch.Tensor | None = None) -> torch.Tensor:
    """SHA-256 of each row of a [N, L] uint8 tensor (or of data[offsets[i]:offsets[i + 1]] for a
    1-D data tensor and int64 offsets) as [N, 32] uint8, on the tensor's device; out= writes a
    preallocated [N, 32] tensor and returns it."""
    return _call(_sha256_ops, x, offsets, out)


def sha256d(x: torch.Tensor, *, offsets: torch.Tensor | None = None, out: torch.Tensor | None = None) -> torch.Tensor:
    """SHA-256(SHA-256(m)) of each message, as Bitcoin hashes; arguments as for sha256."""
    return _call(_sha256d_ops, x, offsets, out)


# ---- Ciphers ----
#
# Data: a contiguous uint8 tensor on the CPU or a CUDA device; the result has its shape and device.
# Keys, IVs and AAD are contiguous CPU uint8 tensors (the cipher API reads them on the host; a
# message's key, IV and AAD of up to 256 bytes reach the GPU as kernel parameters, which CUDA graphs
# capture), except that a CUDA batch's keys, IVs and AAD may each also be CUDA tensors on the data's
# device, which the kernels read in place on torch's current stream (no copy to the host and back;
# not wiped: they are the caller's). AEAD tags live on the data's device and are written there with
# no wait. aead_decrypt takes the tag on the CPU or the data's device (a CUDA batch's tags are
# compared there, in place; only the verdict comes back). One message: key
# [key_bytes], iv [iv_bytes], aad [A], tag [16]; x of any shape, encrypted as its bytes in order.
# A batch: key [N, key_bytes] and x [N, L], with iv [N, iv_bytes], aad [N, A] (or empty: none) and
# tag [N, 16], one of each per row.

TAG_BYTES = 16

_cipher_infos: dict = {}


def _cipher_info(op: str, cipher: str) -> dict:
    info = _cipher_infos.get(cipher)
    if info is None:
        try:
            info = dict(_opkit.cipher_info(cipher))
        except _opkit.Error:
            raise ValueError(
                f"{op}: unknown cipher {cipher!r} (aes-128-ctr, aes-192-ctr, aes-256-ctr, aes-128-gcm, aes-192-gcm, "
                "aes-256-gcm, chacha20, chacha20-poly1305)"
            ) from None
        info["name"] = cipher.strip().lower()
        info = _cipher_infos.setdefault(cipher, info)
    return info


def _iv_sizes_ok(name: str, iv_bytes: int) -> tuple[bool, str]:
    if name.endswith("-ctr"):
        return iv_bytes == 16, "16 bytes (the initial counter block)"
    if name.endswith("-gcm"):
        return iv_bytes >= 1, "1 byte or more (12 recommended)"
    if name == "chacha20":
        return iv_bytes in (12, 16), "16 bytes (counter || nonce) or a 12-byte nonce"
    return iv_bytes == 12, "12 bytes"


def _input_bytes(op: str, what: str, t, shape_hint: str, device_ok: torch.device | None = None) -> None:
    """Checks a key, IV or AAD tensor: contiguous uint8 on the CPU, or on `device_ok` (a CUDA
    batch's data device) when given."""
    where = "a CPU uint8 tensor" + (f" (or on the data's device {device_ok})" if device_ok is not None else "")
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{op}: {what} must be {where} {shape_hint}, got a {type(t).__name__}")
    if t.dtype != torch.uint8 or not (t.device.type == "cpu" or t.device == device_ok):
        raise ValueError(f"{op}: {what} must be {where} {shape_hint}, got {t.dtype} on {t.device}")
    if not t.is_contiguous():
        raise ValueError(f"{op}: {what} is not contiguous")


def _check_cipher(op: str, x, cipher: str, key, iv, aad, tag, aead: bool, counter: int = 0):
    """Checks an op's arguments (on real and fake tensors alike); returns (batch, rows, length)."""
    info = _cipher_info(op, cipher)
    if info["aead"] != aead:
        other = "opkit::aead_encrypt / aead_decrypt" if info["aead"] else "opkit::encrypt (also decrypts)"
        kind = "an AEAD" if info["aead"] else "not an AEAD"
        raise ValueError(f"{op}: {cipher} is {kind}; use {other}")
    if x.dtype != torch.uint8:
        raise ValueError(f"{op}: expected a uint8 data tensor, got {x.dtype}")
    if not x.is_contiguous():
        raise ValueError(f"{op}: the data tensor is not contiguous; pass x.contiguous()")
    if x.device.type not in ("cpu", "cuda"):
        raise ValueError(f"{op}: opkit encrypts CPU and CUDA tensors, not {x.device.type} ones")
    key_bytes = info["key_bytes"]
    if not isinstance(key, torch.Tensor):
        raise TypeError(f"{op}: key must be a uint8 tensor of [{key_bytes}] (or [N, {key_bytes}] for a batch), "
                        f"got a {type(key).__name__}")
    batch = key.dim() == 2
    # A CUDA batch may keep its keys, IVs and AAD on the data's device.
    device_ok = x.device if batch and x.device.type == "cuda" else None
    _input_bytes(op, "key", key, f"of [{key_bytes}] (or [N, {key_bytes}] for a batch)", device_ok)
    if key.dim() not in (1, 2) or key.shape[-1] != key_bytes:
        raise ValueError(f"{op}: {cipher} takes a {key_bytes}-byte key: key must be [{key_bytes}] "
                         f"(or [N, {key_bytes}] for a batch), got {tuple(key.shape)}")
    if batch:
        if x.dim() != 2 or x.shape[0] != key.shape[0]:
            raise ValueError(f"{op}: a batch of {key.shape[0]} keys takes [{key.shape[0]}, L] data, got {tuple(x.shape)}")
        rows, length = x.shape
    else:
        rows, length = 1, x.numel()
    lead = (rows,) if batch else ()
    _input_bytes(op, "iv", iv, "[iv_bytes]" + (" per row: [N, iv_bytes]" if batch else ""), device_ok)
    if iv.dim() != len(lead) + 1 or tuple(iv.shape[:-1]) != lead:
        raise ValueError(f"{op}: iv must be {'[N, iv_bytes]' if batch else '[iv_bytes]'}, got {tuple(iv.shape)}")
    ok, wanted = _iv_sizes_ok(info["name"], iv.shape[-1])
    if not ok:
        raise ValueError(f"{op}: {cipher} takes an IV of {wanted}, got {iv.shape[-1]} bytes")
    if not 0 <= counter < 1 << 32:
        raise ValueError(f"{op}: counter must be a 32-bit unsigned block counter, got {counter}")
    if aad is not None:
        _input_bytes(op, "aad", aad, "[A]" + (" per row: [N, A] (or empty)" if batch else ""), device_ok)
        if batch and not (aad.numel() == 0 or (aad.dim() == 2 and aad.shape[0] == rows)):
            raise ValueError(f"{op}: a batch's aad must be [N, A] (or empty), got {tuple(aad.shape)}")
        if not batch and aad.dim() != 1:
            raise ValueError(f"{op}: aad must be 1-D, got {tuple(aad.shape)}")
    if tag is not None:
        wanted = f"of {list(lead) + [TAG_BYTES]} on the CPU or on the data's device"
        if not isinstance(tag, torch.Tensor):
            raise TypeError(f"{op}: tag must be a uint8 tensor {wanted}, got a {type(tag).__name__}")
        if tag.dtype != torch.uint8 or (tag.device.type != "cpu" and tag.device != x.device):
            raise ValueError(f"{op}: tag must be a uint8 tensor {wanted}, got {tag.dtype} on {tag.device}")
        if not tag.is_contiguous():
            raise ValueError(f"{op}: tag is not contiguous")
        if tuple(tag.shape) != (*lead, TAG_BYTES):
            raise ValueError(f"{op}: tag must be {list(lead) + [TAG_BYTES]}, got {tuple(tag.shape)}")
    return batch, rows, length


def _check_cipher_out(op: str, x, out) -> None:
    if out.dtype != torch.uint8 or out.shape != x.shape or out.device != x.device or not out.is_contiguous():
        raise ValueError(
            f"{op}: out must be a contiguous uint8 tensor of the data's shape {tuple(x.shape)} on {x.device}, got "
            f"{tuple(out.shape)} {out.dtype} on {out.device}"
        )


def _cipher_run(cipher, encrypt_, x, out, shape, key, iv, aad, tag, counter):
    batch, rows, length = shape
    gpu, stream = (_opkit_device(x.device), _stream_of(x.device)) if x.is_cuda else (None, 0)
    aad_at, aad_bytes = (aad.data_ptr(), aad.numel()) if aad is not None else (0, 0)
    tag_at, tag_bytes = (tag.data_ptr(), tag.numel()) if tag is not None else (0, 0)
    tag_on_device = tag is not None and tag.is_cuda
    aad_on_device = aad is not None and aad.is_cuda
    _opkit.cipher_at(cipher, encrypt_, gpu, x.data_ptr(), out.data_ptr(), batch, rows, length, key.data_ptr(),
                     key.numel(), iv.data_ptr(), iv.numel(), aad_at, aad_bytes, tag_at, tag_bytes, tag_on_device,
                     stream, counter, key.is_cuda, iv.is_cuda, aad_on_device)


def _define_ciphers():
    def encrypt(x, cipher, key, iv, counter=0):
        shape = _check_cipher("opkit::encrypt", x, cipher, key, iv, None, None, False, counter)
        out = torch.empty_like(x)
        _cipher_run(cipher, True, x, out, shape, key, iv, None, None, counter)
        return out

    def encrypt_fake(x, cipher, key, iv, counter=0):
        _check_cipher("opkit::encrypt", x, cipher, key, iv, None, None, False, counter)
        return torch.empty_like(x)

    def encrypt_out(x, cipher, key, iv, out, counter=0):
        shape = _check_cipher("opkit::encrypt_out", x, cipher, key, iv, None, None, False, counter)
        _check_cipher_out("opkit::encrypt_out", x, out)
        _cipher_run(cipher, True, x, out, shape, key, iv, None, None, counter)

    def encrypt_out_fake(x, cipher, key, iv, out, counter=0):
        _check_cipher("opkit::encrypt_out", x, cipher, key, iv, None, None, False, counter)
        _check_cipher_out("opkit::encrypt_out", x, out)

    def tag_shape(x, key):
        return (x.shape[0], TAG_BYTES) if key.dim() == 2 else (TAG_BYTES,)

    def aead_encrypt(x, cipher, key, iv, aad):
        shape = _check_cipher("opkit::aead_encrypt", x, cipher, key, iv, aad, None, True)
        out = torch.empty_like(x)
        # The tag lives with the data: a CUDA message's tag, or a CUDA batch's tags, are written
        # there without a wait (so CUDA graphs capture a one-message op).
        tag = x.new_empty(tag_shape(x, key))
        _cipher_run(cipher, True, x, out, shape, key, iv, aad, tag, 0)
        return out, tag

    def aead_encrypt_fake(x, cipher, key, iv, aad):
        _check_cipher("opkit::aead_encrypt", x, cipher, key, iv, aad, None, True)
        return torch.empty_like(x), x.new_empty(tag_shape(x, key))

    def aead_decrypt(x, cipher, key, iv, aad, tag):
        shape = _check_cipher("opkit::aead_decrypt", x, cipher, key, iv, aad, tag, True)
        out = torch.empty_like(x)
        # A batch's tags on the GPU are compared there (only the verdict comes back); one message's
        # tag comes to the host, where its verdict is waited for anyway.
        batch = shape[0]
        _cipher_run(cipher, False, x, out, shape, key, iv, aad, tag if batch else tag.cpu(), 0)
        return out

    def aead_decrypt_fake(x, cipher, key, iv, aad, tag):
        _check_cipher("opkit::aead_decrypt", x, cipher, key, iv, aad, tag, True)
        return torch.empty_like(x)

    return (
        _define("opkit::encrypt", "(Tensor x, str cipher, Tensor key, Tensor iv, int counter=0) -> Tensor",
                encrypt, encrypt_fake),
        _define("opkit::encrypt_out",
                "(Tensor x, str cipher, Tensor key, Tensor iv, Tensor(a!) out, int counter=0) -> ()",
                encrypt_out, encrypt_out_fake),
        _define("opkit::aead_encrypt",
                "(Tensor x, str cipher, Tensor key, Tensor iv, Tensor aad) -> (Tensor, Tensor)",
                aead_encrypt, aead_encrypt_fake),
        _define("opkit::aead_decrypt",
                "(Tensor x, str cipher, Tensor key, Tensor iv, Tensor aad, Tensor tag) -> Tensor",
                aead_decrypt, aead_decrypt_fake),
    )


_encrypt_op, _encrypt_out_op, _aead_encrypt_op, _aead_decrypt_op = _define_ciphers()


def _host_tensor(value):
    """bytes (or a bytes-like object) as a CPU uint8 tensor; tensors pass through."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return torch.tensor(list(bytes(value)), dtype=torch.uint8)
    return value


def encrypt(x: torch.Tensor, *, cipher: str, key, iv, aad=None, counter: int = 0, out: torch.Tensor | None = None):
    """Encrypts the uint8 tensor x on its device: the ciphertext, or (ciphertext, tag) for an AEAD
    (aes-*-gcm, chacha20-poly1305; the tag on x's device). key, iv, aad: CPU uint8 tensors or bytes
    ([N, ...] tensors for a batch of [N, L] rows). out= (CTR and ChaCha20 only) writes a
    preallocated tensor of x's shape and returns it."""
    key, iv, aad = _host_tensor(key), _host_tensor(iv), _host_tensor(aad)
    if _cipher_info("opkit.torch.encrypt", cipher)["aead"]:
        if out is not None:
            raise ValueError(f"opkit.torch.encrypt: out= is for CTR and ChaCha20; {cipher} allocates its outputs")
        if aad is None:
            aad = key.new_empty((0,))
        return _aead_encrypt_op(x, cipher, key, iv, aad)
    if aad is not None:
        raise ValueError(f"opkit.torch.encrypt: {cipher} takes no aad")
    if out is None:
        return _encrypt_op(x, cipher, key, iv, counter)
    _encrypt_out_op(x, cipher, key, iv, out, counter)
    return out


def decrypt(x: torch.Tensor, *, cipher: str, key, iv, aad=None, tag=None, counter: int = 0,
            out: torch.Tensor | None = None):
    """Decrypts x: for CTR and ChaCha20 the same as encrypt; an AEAD verifies tag= and raises
    opkit.AuthenticationError when it does not match (releasing no plaintext)."""
    key, iv, aad, tag = _host_tensor(key), _host_tensor(iv), _host_tensor(aad), _host_tensor(tag)
    if _cipher_info("opkit.torch.decrypt", cipher)["aead"]:
        if tag is None:
            raise ValueError(f"opkit.torch.decrypt: {cipher} needs the tag (tag=)")
        if out is not None:
            raise ValueError(f"opkit.torch.decrypt: out= is for CTR and ChaCha20; {cipher} allocates its output")
        return _aead_decrypt_op(x, cipher, key, iv, aad if aad is not None else key.new_empty((0,)), tag)
    if tag is not None:
        raise ValueError(f"opkit.torch.decrypt: {cipher} has no tag")
    return encrypt(x, cipher=cipher, key=key, iv=iv, aad=aad, counter=counter, out=out)


# ---- LZ4 ----
#
# One LZ4 frame (the `lz4` tool's format) of a contiguous uint8 tensor's bytes, and the bytes of the
# concatenated frames in a 1-D uint8 tensor: both outputs are 1-D uint8 tensors on the input's
# device whose length depends on the data, which their fake kernels say with an unbacked size
# (torch.library.get_ctx().new_dynamic_size()), so torch.compile traces them without a graph break.
# CPU tensors go through liblz4 on the host; CUDA tensors through opkit's kernels on their GPU.
# Either way the frame structure is host work, so a CUDA call waits: for torch's current stream
# (the input is ready), then for the result (its size is known). The CUDA result is opkit's
# allocation handed to torch by DLPack, not the caching allocator's.

_LZ4_BLOCK_IDS = {64 << 10: 4, 256 << 10: 5, 1 << 20: 6, 4 << 20: 7}


def _check_lz4(op: str, x) -> None:
    if x.dtype != torch.uint8:
        raise ValueError(f"{op}: expected a uint8 tensor, got {x.dtype}")
    if not x.is_contiguous():
        raise ValueError(f"{op}: the tensor is not contiguous; pass x.contiguous()")
    if x.device.type not in ("cpu", "cuda"):
        raise ValueError(f"{op}: opkit compresses CPU and CUDA tensors, not {x.device.type} ones")


def _lz4_run(op: str, call, x):
    flat = x.reshape(-1)
    try:
        if x.is_cuda:
            torch.cuda.current_stream(x.device).synchronize()
            return torch.from_dlpack(call(flat))
        return torch.from_numpy(call(flat.numpy()).reshape(-1))
    except _opkit.Error as error:
        raise type(error)(f"{op}: {error}") from None


def _define_lz4():
    def compress(x, block_size=64 << 10, content_checksum=True):
        _check_lz4("opkit::lz4_compress", x)
        block = _lz4_block_id(block_size)
        return _lz4_run("opkit::lz4_compress",
                        lambda a: _opkit.lz4_compress(a, block, False, content_checksum, False, None), x)

    def compress_fake(x, block_size=64 << 10, content_checksum=True):
        _check_lz4("opkit::lz4_compress", x)
        _lz4_block_id(block_size)
        return x.new_empty((torch.library.get_ctx().new_dynamic_size(),))

    def decompress(frame, max_size=_opkit.lz4_default_max_output, verify=True):
        _check_lz4("opkit::lz4_decompress", frame)
        _lz4_max_size(max_size)
        return _lz4_run("opkit::lz4_decompress", lambda a: _opkit.lz4_decompress(a, max_size, verify, None), frame)

    def decompress_fake(frame, max_size=_opkit.lz4_default_max_output, verify=True):
        _check_lz4("opkit::lz4_decompress", frame)
        _lz4_max_size(max_size)
        return frame.new_empty((torch.library.get_ctx().new_dynamic_size(max=max_size),))

    return (
        _define("opkit::lz4_compress", "(Tensor x, int block_size=65536, bool content_checksum=True) -> Tensor",
                compress, compress_fake),
        _define("opkit::lz4_decompress",
                f"(Tensor frame, int max_size={_opkit.lz4_default_max_output}, bool verify=True) -> Tensor",
                decompress, decompress_fake),
    )


def _lz4_block_id(block_size: int) -> int:
    block = _LZ4_BLOCK_IDS.get(block_size)
    if block is None:
        raise ValueError(f"opkit::lz4_compress: block_size must be one of {sorted(_LZ4_BLOCK_IDS)}, got {block_size}")
    return block


def _lz4_max_size(max_size: int) -> None:
    if max_size < 0:
        raise ValueError(f"opkit::lz4_decompress: max_size must not be negative, got {max_size}")


_lz4_compress_op, _lz4_decompress_op = _define_lz4()


def lz4_compress(x: torch.Tensor, *, block_size: int = 64 << 10, content_checksum: bool = True) -> torch.Tensor:
    """One LZ4 frame of x's bytes (a contiguous uint8 tensor) as a 1-D uint8 tensor on x's device.
    content_checksum=False leaves out the frame's xxHash32 of the whole content (`lz4
    --no-frame-crc`): on a GPU that hash is sequential host work over a copy of the content, the
    larger part of a call's time."""
    return _lz4_compress_op(x, block_size, content_checksum)


def lz4_decompress(frame: torch.Tensor, *, max_size: int = _opkit.lz4_default_max_output,
                   verify: bool = True) -> torch.Tensor:
    """The data of the concatenated LZ4 frames in a 1-D uint8 tensor; more than max_size bytes, a
    malformed frame or a checksum that does not match raise opkit.Error (verify=False skips the
    block and content checksums; the frame's structure is still checked)."""
    return _lz4_decompress_op(frame, max_size, verify)


# ---- User kernels as ops ----


class _KernelSource:
    """One kernel's source, compiled once per device (opkit's kernel cache also keeps it across
    processes) and launched on torch's current stream."""

    # Registered ops live until the interpreter exits; their kernels are let go just before, so
    # that the modules unload while the CUDA context and the extension still exist.
    _every: weakref.WeakSet = weakref.WeakSet()

    def __init__(self, op: str, source: str, kernel: str, options):
        self.op = op
        self.source = source
        self.kernel = kernel
        self.options = list(options)
        self._kernels: dict = {}
        self._lock = threading.Lock()
        _KernelSource._every.add(self)

    def on(self, index: int, tensor: torch.Tensor):
        """The launcher for the device of `tensor`, whose get_device() is `index` (-1: the CPU),
        compiled on first use there; kept per device index so that a launch makes no wrapper
        objects (not even a torch.device). A launcher is (kernel.launch_tensors, kernel.launch, the
        opkit Device of a GPU or None for the CPU)."""
        launcher = self._kernels.get(index)
        if launcher is not None:
            return launcher
        device = tensor.device
        if device.type == "cuda":
            where = _opkit_device(device)
        elif device.type == "cpu":
            where = _opkit.Device.cpu()
        else:
            raise ValueError(f"{self.op}: opkit runs kernels on CUDA and CPU tensors, not on {device.type}")
        with self._lock:
            launcher = self._kernels.get(index)
            if launcher is None:
                file_name = self.op.replace("::", "_") + ".cu"
                module = SourceModule(self.source, device=where, options=self.options, name=file_name)
                kernel = module.get_function(self.kernel)._kernel
                gpu = where if device.type == "cuda" else None
                launcher = (kernel.launch_tensors, kernel.launch, gpu)
                self._kernels[index] = launcher
        return launcher


def _inferred_schema(outputs) -> str:
    names = list(inspect.signature(outputs).parameters)
    return "(" + ", ".join(f"Tensor {n}" for n in names) + ") -> Tensor"


def _as_tuple(value) -> tuple:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _checked_outputs(op: str, value) -> tuple:
    outs = _as_tuple(value)
    for i, out in enumerate(outs):
        if not isinstance(out, torch.Tensor):
            raise TypeError(f"{op}: the outputs rule gave a {type(out).__name__} as output #{i}, not a tensor")
    return outs


def _first_tensor_position(qualified: str, schema: str) -> int | None:
    """The position of the op's first parameter of type Tensor, which every call fills with a
    tensor (whose device the kernel runs on); None when no positional parameter is one (then the
    first tensor among a call's arguments is searched for)."""
    for i, argument in enumerate(torch._C.parse_schema(qualified + schema).arguments):
        if argument.kwarg_only:
            return None
        if isinstance(argument.type, torch._C.TensorType):
            return i
    return None


def _first_tensor(op: str, op_args):
    for a in op_args:
        if isinstance(a, torch.Tensor):
            return a
    raise ValueError(f"{op}: needs at least one tensor argument")


def kernel_op(
    name: str,
    source: str,
    *,
    kernel: str,
    grid,
    block,
    outputs=None,
    schema: str | None = None,
    args=None,
    shared: int = 0,
    options=(),
):
    """Registers a CUDA C++ kernel as the torch op `name` ("namespace::op") and returns it.

    source, kernel: the CUDA C++ source and the __global__ function's name. It is compiled on
        first use on each device (NVRTC for CUDA tensors, the host compiler for CPU tensors, on
        opkit's CPU backend) and kept.
    outputs: the output rule: called with the op's arguments, returns the new output tensor(s),
        e.g. lambda a, b: torch.empty_like(a). It runs on fake tensors too, which is how
        torch.compile learns shapes and dtypes, so it must only allocate (empty, empty_like,
        new_empty). None: the op returns nothing and mutates its (a!) arguments.
    schema: the op's arguments and returns in torch's schema language, e.g.
        "(Tensor x, float a) -> Tensor" or "(Tensor(a!) a) -> ()" for a kernel that writes its
        argument. Default: every parameter of `outputs` is a Tensor, and one Tensor is returned.
    args: the kernel's arguments: called with (*outputs, *op arguments), returns them in kernel
        parameter order; tensors pass as pointers, numpy scalars by value with their C type,
        Python ints as 32-bit ints. Default: outputs first, then the op's arguments.
    grid, block: launch shape, 1 to 3 ints, or a callable of the op's arguments giving one. A
        grid with a 0 dimension launches nothing.
    shared: dynamic shared memory in bytes. options: compiler options (e.g. ["--use_fast_math"]).
    """
    if schema is None:
        if outputs is None:
            raise ValueError(f"{name}: an op without an outputs rule needs a schema (e.g. '(Tensor(a!) a) -> ()')")
        schema = _inferred_schema(outputs)
    _split_name(name)
    if outputs is not None and torch._C.parse_schema(name + schema).is_mutable:
        raise ValueError(f"{name}: an op with an outputs rule returns new tensors and writes none of its "
                         f"arguments; its schema {schema!r} marks one written (a kernel that writes its "
                         "arguments has outputs=None)")
    code = _KernelSource(name, source, kernel, options)
    returns_tuple = _returns_tuple(schema)

    def result(outs):
        if outputs is None:
            return None
        return outs if len(outs) != 1 or returns_tuple else outs[0]

    # Everything a call can know in advance is worked out here (the fixed launch shapes, where the
    # first tensor argument is, the kept launchers), so that a call runs straight through.
    fixed_grid = None if callable(grid) else _launch_shape(name, "grid", grid, ())
    fixed_block = None if callable(block) else _launch_shape(name, "block", block, ())
    shared_bytes = int(shared)
    first = _first_tensor_position(name, schema)
    launchers = code._kernels
    tensor_type, scalar_type = torch.Tensor, np.generic
    current_stream = _current_raw_stream

    def run(*op_args):
        a = op_args[first] if first is not None else _first_tensor(name, op_args)
        if outputs is None:
            outs = ()
        else:
            outs = outputs(*op_args)
            outs = (outs,) if type(outs) is tensor_type else _checked_outputs(name, outs)
        if args is None:
            kernel_args = (*outs, *op_args)
        else:
            kernel_args = args(*outs, *op_args)
            if type(kernel_args) is not tuple:
                kernel_args = tuple(kernel_args)
        index = a.get_device()  # -1 for the CPU: compared as an int, not as a torch.device
        if fixed_grid is not None:
            grid3 = fixed_grid
        else:
            shape = grid(*op_args)
            try:
                grid3 = _GRID_SEEN[shape]
            except (KeyError, TypeError):
                grid3 = _grid3(name, shape)
        if grid3 is _EMPTY_GRID:  # nothing to launch; the arguments are still checked
            for i, arg in enumerate(kernel_args):
                _pack(name, a, index, arg, i)
        else:
            block3 = fixed_block if fixed_block is not None else _launch_shape(name, "block", block, op_args)
            launcher = launchers.get(index)
            if launcher is None:
                launcher = code.on(index, a)
            launch_tensors, launch, gpu = launcher
            handle = current_stream(index) if gpu is not None else None
            # The common arguments (contiguous tensors of the op's device, 32-bit ints, NumPy
            # scalars) are packed by the launch itself; anything else by the general rules, which
            # also say what is wrong.
            if not launch_tensors(kernel_args, index, tensor_type, scalar_type, grid3, block3, shared_bytes, handle):
                packed = [_pack(name, a, index, arg, i) for i, arg in enumerate(kernel_args)]
                launch(packed, grid3, block3, shared_bytes, borrowed_stream(gpu, handle) if handle else None)
        return result(outs)

    def fake(*op_args):
        return result(_checked_outputs(name, outputs(*op_args)) if outputs is not None else ())

    op = _define(name, schema, run, fake)
    if outputs is not None:
        _refuse_gradients(name, op, run)
    op._opkit_source = code  # the per-device kernels, for tests
    return op


# ---- No gradient, at no cost when none is asked for ----
#
# An op without an autograd kernel gets torch's fallback, which lets backward through the op's
# outputs pass *no* gradient back with only a warning. Ops with outputs therefore have an autograd
# kernel that refuses: when an input requires grad (and grad mode is on), the outputs get a
# backward that raises an error naming the op. torch.library.register_autograd would do that too,
# but its kernel costs ~4 us on every call (CPU tensors, 2-core VM: a dataclass, a context manager,
# and a redispatch back through the dispatcher into the op's Python kernel). This one, when nothing
# requires grad, calls the op's own kernel directly, which is exactly where the dispatcher would
# go next: it checks that from the dispatch key set (no fake or functional tensor, no mode, no
# subclass: the highest key below autograd is CPU or CUDA, whose kernel is the op's own), a
# decision kept per key set. Anything else redispatches below autograd, as register_autograd does.
# It costs ~0.8 us a call more than no autograd kernel (the key set object torch makes for it and
# reading it), so ops without outputs, which have no gradient to refuse, keep torch's C++ fallback.

_BELOW_AUTOGRAD = torch._C._after_autograd_keyset
_BELOW_INPLACE_OR_VIEW = torch._C._after_ADInplaceOrView_keyset  # ADInplaceOrView: a fallthrough for these ops
_OWN_KERNEL_KEYS = (torch._C.DispatchKey.CPU, torch._C.DispatchKey.CUDA)
_own_kernel_next: dict = {}  # raw key set -> whether below autograd the op's own CPU/CUDA kernel runs


def _own_kernel_is_next(keyset) -> bool:
    raw = keyset.raw_repr()
    direct = _own_kernel_next.get(raw)
    if direct is None:
        direct = (keyset & _BELOW_INPLACE_OR_VIEW).highestPriorityTypeId() in _OWN_KERNEL_KEYS
        if len(_own_kernel_next) < 256:
            _own_kernel_next[raw] = direct
    return direct


class _NoGradient(torch.autograd.Function):
    """The op's forward below autograd; a backward that raises, naming the op."""

    @staticmethod
    def forward(name, op, keyset, *op_args):
        with torch._C._AutoDispatchBelowAutograd():
            return op.redispatch(keyset & _BELOW_AUTOGRAD, *op_args)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.op_name = inputs[0]

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(_no_gradient(ctx.op_name))


def _no_gradient(name: str) -> str:
    return (f"{name} has no gradient: it is a kernel opkit launches, with no backward formula "
            "(call it on detached tensors, or wrap it in a torch.autograd.Function of your own)")


def _refuse_gradients(name: str, op, run) -> None:
    """Registers the op's autograd kernel: see above."""
    any_requires_grad, grad_enabled = torch._C._any_requires_grad, torch._C.is_grad_enabled

    def autograd(keyset, *op_args):
        if any_requires_grad(*op_args) and grad_enabled():
            if torch._C._are_functorch_transforms_active():  # torch.func.grad & co: refused here, by name
                raise RuntimeError(_no_gradient(name) + "; torch.func transforms cannot differentiate through it")
            return _NoGradient.apply(name, op, keyset, *op_args)
        if _own_kernel_is_next(keyset):
            return run(*op_args)
        with torch._C._AutoDispatchBelowAutograd():
            return op.redispatch(keyset & _BELOW_AUTOGRAD, *op_args)

    namespace, op_name = _split_name(name)
    _libraries[namespace].impl(op_name, autograd, "Autograd", with_keyset=True)


def _returns_tuple(schema: str) -> bool:
    returns = schema.split("->", 1)[1].strip()
    return returns.startswith("(") and returns != "()"


_EMPTY_GRID = (0, 0, 0)  # a grid with a 0 dimension: the launch is skipped
_GRID_SEEN: dict = {}  # grids of callable rules already checked: (n,) -> (n, 1, 1), or _EMPTY_GRID


def _launch_shape(op: str, what: str, rule, op_args):
    value = rule(*op_args) if callable(rule) else rule
    dims = (value,) if isinstance(value, int) else tuple(value)
    if what == "grid" and any(int(d) == 0 for d in dims):
        return _EMPTY_GRID
    return _dim3(value, f"{op}: {what}")


def _grid3(op: str, value):
    """A callable grid rule's result as (x, y, z), or _EMPTY_GRID; remembered when hashable."""
    grid3 = _launch_shape(op, "grid", value, ())
    if type(value) in (int, tuple) and len(_GRID_SEEN) < 4096:
        _GRID_SEEN[value] = grid3
    return grid3


@atexit.register
def _release_kernels() -> None:
    for source in list(_KernelSource._every):
        source._kernels.clear()
    release_borrowed_streams()
    release_cuda_devices()


def _pack(op: str, first: torch.Tensor, device_index: int, arg, index: int) -> bytes:
    if type(arg) is int and _INT32[0] <= arg <= _INT32[1]:  # the common `n`, without building a _Call
        return _INT32_STRUCT.pack(arg)
    if isinstance(arg, torch.Tensor):
        # get_device(): -1 on the CPU, the ordinal on CUDA; the op dispatches on no other device.
        if arg.get_device() != device_index:
            raise ValueError(f"{op}: kernel argument #{index} lives on {arg.device}, the op runs on {first.device}")
        if not arg.is_contiguous():
            raise ValueError(f"{op}: kernel argument #{index} is not contiguous; pass x.contiguous()")
        return _POINTER_STRUCT.pack(arg.data_ptr())
    if not isinstance(arg, (int, np.generic)):
        raise TypeError(
            f"{op}: kernel argument #{index} is a {type(arg).__name__}; kernel ops pass tensors, numpy scalars "
            "(numpy.float32(a)) and ints (the args= rule converts the op's arguments)"
        )
    try:
        return _Call(None, None).pack(arg, index)  # scalars: the same rules as SourceModule kernels
    except (TypeError, OverflowError) as error:
        raise type(error)(f"{op}: {error}") from None
