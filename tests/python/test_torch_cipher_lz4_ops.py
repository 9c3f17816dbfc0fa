"""opkit.torch's cipher and LZ4 ops (torch.ops.opkit.encrypt, encrypt_out, aead_encrypt,
aead_decrypt, lz4_compress, lz4_decompress): against references with no opkit code in them (the
`cryptography` package, else OpenSSL's libcrypto through ctypes; liblz4 through the `lz4` package,
else the `lz4` command-line tool), with torch.library.opcheck, under torch.compile(fullgraph=True),
and with bad inputs. CPU tensors everywhere; CUDA tensors where a GPU is. Skips without torch."""

import os
import shutil
import subprocess

import numpy as np
import pytest

import opkit
from conftest import CUDA_MISSING, captured_cuda_graph

torch = pytest.importorskip("torch", reason="PyTorch is not installed (opkit.torch is optional)")
import opkit.torch as ot  # noqa: E402

HAS_CUDA = CUDA_MISSING is None and torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason=f"no CUDA GPU for torch: {CUDA_MISSING or 'torch sees none'}")
DEVICES = [pytest.param("cpu"), pytest.param("cuda", marks=needs_cuda)]
COMPILE_BACKEND = os.environ.get("OPKIT_COMPILE_BACKEND", "inductor")

from cipher_reference import AEADS, REFERENCE, STREAM_CIPHERS, fresh, reference  # noqa: E402

needs_reference = pytest.mark.skipif(REFERENCE is None, reason="no cipher reference (cryptography or libcrypto)")


def host(t):
    return t.cpu().numpy().tobytes()


def as_tensor(b):
    return torch.tensor(list(b), dtype=torch.uint8)


# ---- Ciphers ----


@needs_reference
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cipher", STREAM_CIPHERS)
@pytest.mark.parametrize("shape", [(0,), (1,), (63,), (65,), (1000,), (7, 300), (70001,)])
def test_encrypt_op_equals_reference_and_decrypts_itself(rng, device, cipher, shape):
    key, iv = fresh(rng, cipher)
    data = rng.integers(0, 256, size=shape, dtype=np.uint8)
    x = torch.from_numpy(data).to(device)
    out = torch.ops.opkit.encrypt(x, cipher, as_tensor(key), as_tensor(iv))
    assert out.device == x.device and out.shape == x.shape and out.dtype == torch.uint8
    assert host(out) == reference(cipher, key, iv, data.tobytes())[0]
    back = ot.decrypt(out, cipher=cipher, key=key, iv=iv)
    assert torch.equal(back, x)


@needs_reference
@pytest.mark.parametrize("device", DEVICES)
def test_chacha20_nonce_and_counter(rng, device):
    key, nonce = rng.bytes(32), rng.bytes(12)
    data = rng.integers(0, 256, size=777, dtype=np.uint8)
    x = torch.from_numpy(data).to(device)
    out = ot.encrypt(x, cipher="chacha20", key=key, iv=nonce, counter=1)
    assert host(out) == reference("chacha20", key, (1).to_bytes(4, "little") + nonce, data.tobytes())[0]


@needs_reference
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cipher", AEADS)
@pytest.mark.parametrize("length", [0, 1, 16, 17, 1000, 65537])
def test_aead_ops_equal_reference_and_verify(rng, device, cipher, length):
    key, nonce = fresh(rng, cipher)
    aad = rng.bytes(int(rng.integers(0, 40)))
    data = rng.integers(0, 256, size=length, dtype=np.uint8)
    x = torch.from_numpy(data).to(device)
    ct, tag = torch.ops.opkit.aead_encrypt(x, cipher, as_tensor(key), as_tensor(nonce), as_tensor(aad))
    assert ct.device == x.device and tag.device == x.device and tuple(tag.shape) == (16,)
    expected, expected_tag = reference(cipher, key, nonce, data.tobytes(), aad)
    assert host(ct) == expected and host(tag) == expected_tag
    plain = torch.ops.opkit.aead_decrypt(ct, cipher, as_tensor(key), as_tensor(nonce), as_tensor(aad), tag)
    assert torch.equal(plain, x)
    assert torch.equal(ot.decrypt(ct, cipher=cipher, key=key, iv=nonce, aad=aad, tag=tag.cpu()), x)  # a CPU tag too
    forged = tag.clone()
    forged[int(rng.integers(0, 16))] ^= 1 << int(rng.integers(0, 8))
    with pytest.raises(opkit.AuthenticationError):
        ot.decrypt(ct, cipher=cipher, key=key, iv=nonce, aad=aad, tag=forged)
    if length:
        bad = ct.clone()
        bad[int(rng.integers(0, length))] ^= 1
        with pytest.raises(opkit.AuthenticationError):
            ot.decrypt(bad, cipher=cipher, key=key, iv=nonce, aad=aad, tag=tag)
    with pytest.raises(opkit.AuthenticationError):
        ot.decrypt(ct, cipher=cipher, key=key, iv=nonce, aad=aad + b"!", tag=tag)


@needs_reference
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cipher", ["aes-256-ctr", "chacha20", "aes-128-gcm", "chacha20-poly1305"])
def test_batch_rows_have_their_own_key_and_iv(rng, device, cipher):
    rows, length, aad_bytes = 33, 150, 9
    pairs = [fresh(rng, cipher) for _ in range(rows)]
    keys = torch.from_numpy(np.frombuffer(b"".join(k for k, _ in pairs), np.uint8).reshape(rows, -1).copy())
    ivs = torch.from_numpy(np.frombuffer(b"".join(v for _, v in pairs), np.uint8).reshape(rows, -1).copy())
    aad = torch.from_numpy(rng.integers(0, 256, size=(rows, aad_bytes), dtype=np.uint8))
    data = rng.integers(0, 256, size=(rows, length), dtype=np.uint8)
    x = torch.from_numpy(data).to(device)
    if cipher in AEADS:
        ct, tags = ot.encrypt(x, cipher=cipher, key=keys, iv=ivs, aad=aad)
        assert tuple(tags.shape) == (rows, 16) and tags.device == x.device
    else:
        ct, tags = ot.encrypt(x, cipher=cipher, key=keys, iv=ivs), None
    for i, (key, iv) in enumerate(pairs):
        expected, expected_tag = reference(cipher, key, iv, data[i].tobytes(), host(aad[i]) if tags is not None else b"")
        assert host(ct[i]) == expected
        if tags is not None:
            assert host(tags[i]) == expected_tag
    if tags is None:
        assert torch.equal(ot.decrypt(ct, cipher=cipher, key=keys, iv=ivs), x)
        return
    assert torch.equal(ot.decrypt(ct, cipher=cipher, key=keys, iv=ivs, aad=aad, tag=tags), x)
    forged = tags.clone()
    forged[5, 0] ^= 1
    forged[20, 15] ^= 0x80
    with pytest.raises(opkit.AuthenticationError) as raised:
        ot.decrypt(ct, cipher=cipher, key=keys, iv=ivs, aad=aad, tag=forged)
    assert sorted(raised.value.failed_indices) == [5, 20]


@pytest.mark.parametrize("device", DEVICES)
def test_encrypt_out_writes_the_given_tensor(rng, device):
    key, iv = as_tensor(rng.bytes(16)), as_tensor(rng.bytes(16))
    x = torch.from_numpy(rng.integers(0, 256, size=(4, 100), dtype=np.uint8)).to(device)
    out = torch.full_like(x, 7)
    assert torch.ops.opkit.encrypt_out(x, "aes-128-ctr", key, iv, out) is None
    assert torch.equal(out, torch.ops.opkit.encrypt(x, "aes-128-ctr", key, iv))
    again = torch.zeros_like(x)
    assert ot.encrypt(x, cipher="aes-128-ctr", key=key, iv=iv, out=again) is again
    assert torch.equal(again, out)


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_every_cipher_op(rng, device):
    x = torch.from_numpy(rng.integers(0, 256, size=(8, 96), dtype=np.uint8)).to(device)
    key, iv, nonce = (as_tensor(rng.bytes(n)) for n in (32, 16, 12))
    aad = as_tensor(rng.bytes(13))
    out = torch.empty_like(x)
    torch.library.opcheck(torch.ops.opkit.encrypt.default, (x, "aes-256-ctr", key, iv))
    torch.library.opcheck(torch.ops.opkit.encrypt.default, (x, "chacha20", key, nonce, 1))
    torch.library.opcheck(torch.ops.opkit.encrypt_out.default, (x, "chacha20", key, iv, out))
    ct, tag = torch.ops.opkit.aead_encrypt(x, "aes-256-gcm", key, nonce, aad)
    torch.library.opcheck(torch.ops.opkit.aead_encrypt.default, (x, "aes-256-gcm", key, nonce, aad))
    torch.library.opcheck(torch.ops.opkit.aead_decrypt.default, (ct, "aes-256-gcm", key, nonce, aad, tag))
    keys = key.repeat(8, 1)
    nonces = torch.from_numpy(rng.integers(0, 256, size=(8, 12), dtype=np.uint8))
    torch.library.opcheck(torch.ops.opkit.aead_encrypt.default, (x, "chacha20-poly1305", keys, nonces, aad[:0]))
    torch.library.opcheck(torch.ops.opkit.encrypt.default, (x, "aes-256-ctr", keys, iv.repeat(8, 1)))


@pytest.mark.parametrize("device", DEVICES)
def test_compiled_cipher_ops_match_eager(rng, device):
    def f(x, key, iv, nonce, aad):
        stream = torch.ops.opkit.encrypt(x ^ 0x33, "aes-128-ctr", key, iv)
        sealed, tag = torch.ops.opkit.aead_encrypt(stream, "aes-128-gcm", key, nonce, aad)
        opened = torch.ops.opkit.aead_decrypt(sealed, "aes-128-gcm", key, nonce, aad, tag)
        plain = torch.ops.opkit.encrypt(opened, "aes-128-ctr", key, iv) ^ 0x33
        return sealed.to(torch.int64).sum(), tag, plain

    x = torch.from_numpy(rng.integers(0, 256, size=(16, 64), dtype=np.uint8)).to(device)
    args = (x, as_tensor(rng.bytes(16)), as_tensor(rng.bytes(16)), as_tensor(rng.bytes(12)), as_tensor(b"header"))
    torch._dynamo.reset()
    assert torch._dynamo.explain(f)(*args).graph_break_count == 0
    got = torch.compile(f, fullgraph=True, backend=COMPILE_BACKEND)(*args)
    eager = f(*args)
    assert int(got[0]) == int(eager[0]) and torch.equal(got[1], eager[1])
    assert torch.equal(got[2], x) and torch.equal(eager[2], x)


@pytest.mark.parametrize("device", DEVICES)
def test_cipher_bad_inputs_name_the_op(device):
    x = torch.zeros((4, 32), dtype=torch.uint8, device=device)
    key, iv, nonce, aad = as_tensor(bytes(16)), as_tensor(bytes(16)), as_tensor(bytes(12)), as_tensor(b"")
    enc, aead_enc, aead_dec = torch.ops.opkit.encrypt, torch.ops.opkit.aead_encrypt, torch.ops.opkit.aead_decrypt
    with pytest.raises(ValueError, match="opkit::encrypt: expected a uint8 data tensor, got torch.float32"):
        enc(torch.zeros(8, device=device), "aes-128-ctr", key, iv)
    with pytest.raises(ValueError, match="opkit::encrypt: the data tensor is not contiguous"):
        enc(x.t(), "aes-128-ctr", key, iv)
    with pytest.raises(ValueError, match=r"opkit::encrypt: aes-256-ctr takes a 32-byte key.*got \(16,\)"):
        enc(x, "aes-256-ctr", key, iv)
    with pytest.raises(ValueError, match="opkit::encrypt: key must be a CPU uint8 tensor.*torch.int32"):
        enc(x, "aes-128-ctr", key.to(torch.int32), iv)
    with pytest.raises(ValueError, match="opkit::encrypt: aes-128-ctr takes an IV of 16 bytes"):
        enc(x, "aes-128-ctr", key, nonce)
    with pytest.raises(ValueError, match="opkit::encrypt: unknown cipher 'des'"):
        enc(x, "des", key, iv)
    with pytest.raises(ValueError, match="opkit::encrypt: aes-128-gcm is an AEAD; use opkit::aead_encrypt"):
        enc(x, "aes-128-gcm", key, nonce)
    with pytest.raises(ValueError, match="opkit::aead_encrypt: aes-128-ctr is not an AEAD"):
        aead_enc(x, "aes-128-ctr", key, iv, aad)
    with pytest.raises(ValueError, match="opkit::encrypt: counter must be a 32-bit"):
        enc(x, "chacha20", as_tensor(bytes(32)), nonce, 1 << 32)
    with pytest.raises(ValueError, match=r"opkit::encrypt: a batch of 3 keys takes \[3, L\] data"):
        enc(x, "aes-128-ctr", key.repeat(3, 1), iv.repeat(3, 1))
    with pytest.raises(ValueError, match=r"opkit::aead_decrypt: tag must be \[16\], got \(15,\)"):
        aead_dec(x, "aes-128-gcm", key, nonce, aad, as_tensor(bytes(15)))
    with pytest.raises(ValueError, match=r"opkit::aead_decrypt: tag must be a uint8 tensor of \[16\] on the CPU or"):
        aead_dec(x, "aes-128-gcm", key, nonce, aad, torch.zeros(16, dtype=torch.int32))
    with pytest.raises(ValueError, match=r"opkit::encrypt_out: out must be a contiguous uint8 tensor of the data's"):
        torch.ops.opkit.encrypt_out(x, "aes-128-ctr", key, iv, torch.empty((4, 31), dtype=torch.uint8, device=device))
    with pytest.raises(ValueError, match=r"opkit.torch.decrypt: aes-128-gcm needs the tag"):
        ot.decrypt(x, cipher="aes-128-gcm", key=key, iv=nonce)


@needs_cuda
def test_one_message_keys_on_the_gpu_are_refused():
    x = torch.zeros(64, dtype=torch.uint8, device="cuda")
    with pytest.raises(ValueError, match="opkit::encrypt: key must be a CPU uint8 tensor.*cuda"):
        torch.ops.opkit.encrypt(x, "aes-128-ctr", torch.zeros(16, dtype=torch.uint8, device="cuda"),
                                torch.zeros(16, dtype=torch.uint8))


def test_a_cuda_batch_may_keep_its_keys_ivs_and_aad_on_the_data_device():
    # The ops' checks, which their fake kernels run too: so fake CUDA tensors test them without a
    # GPU. A CUDA batch's keys, IVs and AAD may live on the data's device; not on another device,
    # not for one message (its key reaches the GPU as a kernel parameter), not for CPU data.
    from torch._subclasses.fake_tensor import FakeTensorMode

    def u8(*shape, device="cuda:0"):
        return torch.empty(shape, dtype=torch.uint8, device=device)

    with FakeTensorMode():
        x = u8(4, 32)
        out = torch.ops.opkit.encrypt(x, "aes-128-ctr", u8(4, 16), u8(4, 16))
        assert out.device == x.device and tuple(out.shape) == (4, 32)
        ct, tag = torch.ops.opkit.aead_encrypt(x, "chacha20-poly1305", u8(4, 32), u8(4, 12), u8(4, 5))
        assert tag.device == x.device and tuple(tag.shape) == (4, 16)
        mixed = torch.ops.opkit.encrypt(x, "chacha20", u8(4, 32), u8(4, 12, device="cpu"), 1)
        assert mixed.device == x.device
        # A fake tensor on cuda:1 makes torch touch that GPU where CUDA is available: only without
        # CUDA (fakes need no GPU) or with a second GPU.
        if not torch.cuda.is_available() or torch.cuda.device_count() > 1:
            elsewhere = r"must be a CPU uint8 tensor \(or on the data's device cuda:0\).*on cuda:1"
            with pytest.raises(ValueError, match="key " + elsewhere):
                torch.ops.opkit.encrypt(x, "aes-128-ctr", u8(4, 16, device="cuda:1"), u8(4, 16))
            with pytest.raises(ValueError, match="aad " + elsewhere):
                torch.ops.opkit.aead_encrypt(x, "aes-128-gcm", u8(4, 16), u8(4, 12), u8(4, 5, device="cuda:1"))
        with pytest.raises(ValueError, match=r"opkit::encrypt: key must be a CPU uint8 tensor of \[16\].*cuda:0"):
            torch.ops.opkit.encrypt(u8(32), "aes-128-ctr", u8(16), u8(16, device="cpu"))
        with pytest.raises(ValueError, match=r"iv must be a CPU uint8 tensor \[iv_bytes\] per row.*cuda:0"):
            torch.ops.opkit.encrypt(u8(4, 32, device="cpu"), "aes-128-ctr", u8(4, 16, device="cpu"), u8(4, 16))


@needs_cuda
@needs_reference
@pytest.mark.parametrize("cipher", ["aes-128-ctr", "aes-256-ctr", "chacha20", "aes-128-gcm", "aes-256-gcm",
                                    "chacha20-poly1305"])
def test_cuda_batch_keys_ivs_and_aad_on_the_gpu_are_read_there(rng, cipher):
    # Keys, IVs and AAD as CUDA tensors on the data's device: the ops read them in place; the
    # results are the reference's, decryption (with keys on the GPU too, and the tags compared
    # there, or brought from the CPU) gives the data back, and a forged AEAD row is reported by
    # index.
    rows, length, aad_bytes = 65, 1500, 13
    pairs = [fresh(rng, cipher) for _ in range(rows)]
    keys = torch.from_numpy(np.frombuffer(b"".join(k for k, _ in pairs), np.uint8).reshape(rows, -1).copy()).cuda()
    ivs = torch.from_numpy(np.frombuffer(b"".join(v for _, v in pairs), np.uint8).reshape(rows, -1).copy()).cuda()
    aad = torch.from_numpy(rng.integers(0, 256, size=(rows, aad_bytes), dtype=np.uint8)).cuda()
    data = rng.integers(0, 256, size=(rows, length), dtype=np.uint8)
    x = torch.from_numpy(data).cuda()
    aead = cipher in AEADS
    ct, tags = ot.encrypt(x, cipher=cipher, key=keys, iv=ivs, aad=aad) if aead else (
        ot.encrypt(x, cipher=cipher, key=keys, iv=ivs), None)
    for i, (key, iv) in enumerate(pairs):
        expected, expected_tag = reference(cipher, key, iv, data[i].tobytes(), host(aad[i]) if aead else b"")
        assert host(ct[i]) == expected, f"row {i}"
        if aead:
            assert host(tags[i]) == expected_tag, f"row {i}"
    if not aead:
        assert torch.equal(ot.decrypt(ct, cipher=cipher, key=keys, iv=ivs), x)
        return
    assert tags.is_cuda
    assert torch.equal(ot.decrypt(ct, cipher=cipher, key=keys, iv=ivs, aad=aad, tag=tags), x)
    assert torch.equal(ot.decrypt(ct, cipher=cipher, key=keys, iv=ivs, aad=aad, tag=tags.cpu()), x)
    forged = tags.clone()
    forged[7, 3] ^= 1
    for expected in (forged, forged.cpu()):
        with pytest.raises(opkit.AuthenticationError) as raised:
            ot.decrypt(ct, cipher=cipher, key=keys, iv=ivs, aad=aad, tag=expected)
        assert raised.value.failed_indices == [7]


@needs_cuda
@needs_reference
@pytest.mark.parametrize("cipher", ["aes-128-ctr", "chacha20-poly1305", "aes-256-gcm"])
def test_cuda_batches_with_keys_on_the_gpu_queue_on_a_busy_stream_without_waiting(rng, cipher):
    # Keys, nonces (12 bytes for chacha20-poly1305: no counter check) and the tags all on the GPU:
    # behind a long torch.cuda._sleep the op returns while the stream is still busy, and the
    # results read after it are right.
    rows, length = 64, 1500
    pairs = [fresh(rng, cipher) for _ in range(rows)]
    keys = torch.from_numpy(np.frombuffer(b"".join(k for k, _ in pairs), np.uint8).reshape(rows, -1).copy())
    ivs = torch.from_numpy(np.frombuffer(b"".join(v for _, v in pairs), np.uint8).reshape(rows, -1).copy())
    data = rng.integers(0, 256, size=(rows, length), dtype=np.uint8)
    aead = cipher in AEADS
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x, keys_d, ivs_d = torch.from_numpy(data).cuda(), keys.cuda(), ivs.cuda()
        no_aad = keys_d.new_empty((0,))

        def run():
            return ot.encrypt(x, cipher=cipher, key=keys_d, iv=ivs_d, aad=no_aad) if aead else (
                ot.encrypt(x, cipher=cipher, key=keys_d, iv=ivs_d), None)

        run()  # compiles (or loads) the kernels
        side.synchronize()
        torch.cuda._sleep(200_000_000)  # about 0.1 s of the stream
        ct, tags = run()
        busy = not side.query()
        ct_host, tags_host = ct.cpu(), (tags.cpu() if aead else None)
    assert busy, "the op waited for its stream"
    for i, (key, iv) in enumerate(pairs):
        expected, expected_tag = reference(cipher, key, iv, data[i].tobytes())
        assert host(ct_host[i]) == expected, f"row {i}"
        if aead:
            assert host(tags_host[i]) == expected_tag, f"row {i}"


@needs_cuda
@needs_reference
@pytest.mark.parametrize("cipher", ["aes-256-ctr", "chacha20"])
def test_stream_cipher_ops_queue_on_a_busy_stream_without_waiting(rng, cipher):
    # Behind a long torch.cuda._sleep on a side stream, encrypt_out returns while the stream is
    # still busy (a host wait inside the op would have drained it), its key tensor may be changed
    # at once, and the result, read after the stream, is still right: the op queued its work
    # behind the sleep, on that stream, and had taken its key when it returned.
    data = rng.bytes(1 << 20)
    key, iv = fresh(rng, cipher)
    key_t, iv_t = as_tensor(key), as_tensor(iv)
    pinned = torch.frombuffer(bytearray(data), dtype=torch.uint8).pin_memory()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x = torch.empty(len(data), dtype=torch.uint8, device="cuda")
        out = torch.zeros_like(x)
        torch.ops.opkit.encrypt_out(x, cipher, key_t, iv_t, out)  # compiles (or loads) the kernels
        side.synchronize()
        torch.cuda._sleep(200_000_000)  # about 0.1 s of the stream
        x.copy_(pinned, non_blocking=True)
        torch.ops.opkit.encrypt_out(x, cipher, key_t, iv_t, out)
        busy = not side.query()
        key_t.fill_(0)  # the op has taken the key: changing it now changes nothing
        result = out.cpu()
    assert busy, "the op waited for its stream"
    assert host(result) == reference(cipher, key, iv, data)[0]


@needs_cuda
@needs_reference
@pytest.mark.parametrize("cipher", STREAM_CIPHERS)
def test_stream_cipher_ops_are_captured_in_a_cuda_graph_and_replay_on_new_data(rng, cipher):
    # The key and IV reach the GPU as a kernel's parameter, not by a host copy, so the whole op
    # (scratch allocation, key upload, kernels, key wipe) is captured; every replay encrypts the
    # data then in x under the key the graph was captured with, into out (encrypt_out) and into
    # the graph-owned output of the allocating op.
    n = 3 * 65536 + 100  # whole blocks and a partial one
    key, iv = fresh(rng, cipher)
    key_t, iv_t = as_tensor(key), as_tensor(iv)
    x = torch.empty(n, dtype=torch.uint8, device="cuda")
    out = torch.empty_like(x)

    def step():
        torch.ops.opkit.encrypt_out(x, cipher, key_t, iv_t, out)
        return torch.ops.opkit.encrypt(x, cipher, key_t, iv_t)

    graph, allocated = captured_cuda_graph(step)
    key_t.fill_(0)  # the graph holds the key it was captured with
    for data in replays_on_fresh_data(graph, x, rng):
        expected = reference(cipher, key, iv, data)[0]
        assert host(out) == expected
        assert host(allocated) == expected


def replays_on_fresh_data(graph, x, rng, times=3):
    """Fills the uint8 CUDA tensor x with fresh random bytes, replays the graph and waits for it;
    yields the bytes each time (for the caller to check the graph's outputs against)."""
    for _ in range(times):
        data = rng.bytes(x.numel())
        x.copy_(torch.frombuffer(bytearray(data), dtype=torch.uint8))
        graph.replay()
        torch.cuda.synchronize()
        yield data


@needs_cuda
@needs_reference
@pytest.mark.parametrize("cipher", AEADS)
@pytest.mark.parametrize("aad_bytes", [0, 200])
def test_aead_encryption_is_captured_in_a_cuda_graph_and_replays_on_new_data(rng, cipher, aad_bytes):
    # One message's AEAD encryption writes its tag on the GPU and waits for nothing: key, nonce
    # and AAD (up to 256 bytes) reach the GPU as kernel parameters, so the graph holds them and
    # every replay seals the data then in x, ciphertext and tag into the graph's own outputs.
    n = 2 * 65536 + 77
    key, nonce = fresh(rng, cipher)
    aad = rng.bytes(aad_bytes)
    key_t, nonce_t, aad_t = as_tensor(key), as_tensor(nonce), as_tensor(aad)
    x = torch.empty(n, dtype=torch.uint8, device="cuda")

    graph, (ct, tag) = captured_cuda_graph(lambda: torch.ops.opkit.aead_encrypt(x, cipher, key_t, nonce_t, aad_t))
    key_t.fill_(0)  # the graph holds the key it was captured with
    for data in replays_on_fresh_data(graph, x, rng):
        assert (host(ct), host(tag)) == reference(cipher, key, nonce, data, aad)


def test_ciphers_say_they_have_no_gradient():
    # The ops take uint8 tensors only: a float tensor that requires grad is refused by name, and
    # integer tensors cannot require grad at all, so no silent zero gradient can come out.
    x = torch.zeros(16, requires_grad=True)
    with pytest.raises(ValueError, match="opkit::encrypt: expected a uint8 data tensor"):
        torch.ops.opkit.encrypt(x, "aes-128-ctr", torch.zeros(16, dtype=torch.uint8), torch.zeros(16, dtype=torch.uint8))
    with pytest.raises(RuntimeError, match="floating point"):
        torch.zeros(16, dtype=torch.uint8).requires_grad_()


# ---- LZ4 ----

try:
    import lz4.frame as lz4frame
except ImportError:
    lz4frame = None
LZ4_TOOL = shutil.which("lz4")
needs_lz4_reference = pytest.mark.skipif(lz4frame is None and LZ4_TOOL is None,
                                         reason="no LZ4 reference (the lz4 package or the lz4 tool)")


def lz4_reference_decompress(frame: bytes) -> bytes:
    if lz4frame is not None:
        return lz4frame.decompress(frame)
    return subprocess.run([LZ4_TOOL, "-d", "-c"], input=frame, capture_output=True, check=True).stdout


def lz4_reference_compress(data: bytes) -> bytes:
    if lz4frame is not None:
        return lz4frame.compress(data)
    return subprocess.run([LZ4_TOOL, "-c"], input=data, capture_output=True, check=True).stdout


def compressible(rng, n):
    """Bytes with repeats (so LZ4 finds matches) and noise."""
    words = rng.integers(0, 256, size=(16, 8), dtype=np.uint8)
    data = words[rng.integers(0, 16, size=(n + 7) // 8)].reshape(-1)[:n].copy()
    noise = rng.random(n) < 0.05
    data[noise] = rng.integers(0, 256, size=int(noise.sum()), dtype=np.uint8)
    return data


@needs_lz4_reference
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [0, 1, 100, 65536, 300_001])
@pytest.mark.parametrize("block_size", [64 << 10, 4 << 20])
def test_lz4_ops_equal_reference(rng, device, n, block_size):
    data = compressible(rng, n)
    x = torch.from_numpy(data).to(device)
    frame = torch.ops.opkit.lz4_compress(x, block_size)
    assert frame.device == x.device and frame.dtype == torch.uint8 and frame.dim() == 1
    assert lz4_reference_decompress(host(frame)) == data.tobytes()
    theirs = torch.from_numpy(np.frombuffer(lz4_reference_compress(data.tobytes()), np.uint8).copy()).to(device)
    back = ot.lz4_decompress(theirs)
    assert back.device == x.device and torch.equal(back, x)
    assert torch.equal(torch.ops.opkit.lz4_decompress(frame), x)


@needs_lz4_reference
@pytest.mark.parametrize("device", DEVICES)
def test_lz4_content_checksum_can_be_left_out_and_verification_skipped(rng, device):
    data = compressible(rng, 200_000)
    x = torch.from_numpy(data).to(device)
    with_sum = torch.ops.opkit.lz4_compress(x)
    without = torch.ops.opkit.lz4_compress(x, 65536, False)
    flg_with, flg_without = int(host(with_sum)[4]), int(host(without)[4])
    assert flg_with & 0x04 and not flg_without & 0x04  # FLG's content-checksum bit
    assert without.numel() == with_sum.numel() - 4
    assert lz4_reference_decompress(host(without)) == data.tobytes()
    assert torch.equal(ot.lz4_decompress(without), x)
    # A wrong content checksum: an error when verified, the (intact) data when not.
    bad = with_sum.clone()
    bad[-1] ^= 1
    with pytest.raises(opkit.Error, match="opkit::lz4_decompress"):
        ot.lz4_decompress(bad)
    assert torch.equal(ot.lz4_decompress(bad, verify=False), x)
    torch.library.opcheck(torch.ops.opkit.lz4_compress.default, (x, 65536, False))
    torch.library.opcheck(torch.ops.opkit.lz4_decompress.default, (bad, 1 << 20, False))


@pytest.mark.parametrize("device", DEVICES)
def test_lz4_compresses_any_contiguous_shape_as_its_bytes(rng, device):
    x = torch.from_numpy(compressible(rng, 6000).reshape(3, 20, 100)).to(device)
    assert torch.equal(ot.lz4_decompress(ot.lz4_compress(x)), x.reshape(-1))


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_lz4_ops(rng, device):
    x = torch.from_numpy(compressible(rng, 100_000)).to(device)
    frame = torch.ops.opkit.lz4_compress(x)
    torch.library.opcheck(torch.ops.opkit.lz4_compress.default, (x,))
    torch.library.opcheck(torch.ops.opkit.lz4_compress.default, (x, 1 << 20))
    torch.library.opcheck(torch.ops.opkit.lz4_decompress.default, (frame,))


@pytest.mark.parametrize("device", DEVICES)
def test_compiled_lz4_round_trip_is_one_graph(rng, device):
    # The outputs' lengths are unbacked sizes. fullgraph=True traces them in one graph; without
    # it, dynamo (by default) breaks the graph at a data-dependent output shape unless
    # torch._dynamo.config.capture_dynamic_output_shape_ops is set, as explain() is here.
    def f(x):
        frame = torch.ops.opkit.lz4_compress(x ^ 0x0F)
        return torch.ops.opkit.lz4_decompress(frame) ^ 0x0F, frame.numel()

    x = torch.from_numpy(compressible(rng, 50_000)).to(device)
    graphs = []

    def counting(gm, inputs):
        graphs.append(gm)
        return torch._dynamo.backends.registry.lookup_backend(COMPILE_BACKEND)(gm, inputs)

    torch._dynamo.reset()
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        assert torch._dynamo.explain(f)(x).graph_break_count == 0
    torch._dynamo.reset()
    back, size = torch.compile(f, fullgraph=True, backend=counting)(x)
    assert len(graphs) == 1
    assert torch.equal(back, x) and size == ot.lz4_compress(x ^ 0x0F).numel()


@pytest.mark.parametrize("device", DEVICES)
def test_lz4_bad_inputs_name_the_op(device):
    with pytest.raises(ValueError, match="opkit::lz4_compress: expected a uint8 tensor, got torch.float32"):
        torch.ops.opkit.lz4_compress(torch.zeros(8, device=device))
    with pytest.raises(ValueError, match="opkit::lz4_compress: the tensor is not contiguous"):
        torch.ops.opkit.lz4_compress(torch.zeros((8, 4), dtype=torch.uint8, device=device).t())
    with pytest.raises(ValueError, match="opkit::lz4_compress: block_size must be one of"):
        torch.ops.opkit.lz4_compress(torch.zeros(8, dtype=torch.uint8, device=device), 1000)
    with pytest.raises(opkit.Error, match="opkit::lz4_decompress: .*"):
        torch.ops.opkit.lz4_decompress(torch.arange(64, dtype=torch.uint8, device=device))
    frame = ot.lz4_compress(torch.zeros(10_000, dtype=torch.uint8, device=device))
    with pytest.raises(opkit.Error, match="opkit::lz4_decompress: "):
        ot.lz4_decompress(frame, max_size=9_999)
    assert ot.lz4_decompress(frame, max_size=10_000).numel() == 10_000


def test_lz4_says_it_has_no_gradient():
    with pytest.raises(ValueError, match="opkit::lz4_compress: expected a uint8 tensor"):
        torch.ops.opkit.lz4_compress(torch.zeros(16, requires_grad=True))
