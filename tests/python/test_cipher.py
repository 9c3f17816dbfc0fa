"""opkit.encrypt / opkit.decrypt against cipher_reference (the `cryptography` package, else
libcrypto through ctypes: no opkit code) on fresh random keys, IVs, AAD and data: one message
as bytes or arrays, host data through OpenSSL and through the CPU backend's kernels, batches
with a key and nonce per row, forged tags and ciphertexts. CUDA tensors on the GPU, where there
is one, against opkit's host path (OpenSSL EVP)."""

import numpy as np
import pytest

import opkit
from conftest import CPU_BACKEND_MISSING, requires_gpu
from cipher_reference import CIPHERS, REFERENCE_MISSING, fresh, is_aead, reference

requires_reference = pytest.mark.skipif(REFERENCE_MISSING is not None, reason=str(REFERENCE_MISSING))
LENGTHS = [0, 1, 15, 16, 17, 63, 64, 65, 1000, 70001]
no_cpu = pytest.mark.skipif(CPU_BACKEND_MISSING is not None, reason=f"no CPU backend: {CPU_BACKEND_MISSING}")
PLACES = [None, pytest.param("cpu", marks=no_cpu)]


@requires_reference
@pytest.mark.parametrize("device", PLACES)
@pytest.mark.parametrize("cipher", CIPHERS)
def test_bytes_round_trip_matches_the_reference(rng, cipher, device):
    for length in LENGTHS:
        key, iv = fresh(rng, cipher)
        data = rng.bytes(length)
        aad = rng.bytes(int(rng.integers(0, 40))) if is_aead(cipher) else b""
        expected, expected_tag = reference(cipher, key, iv, data, aad)
        if is_aead(cipher):
            sealed, tag = opkit.encrypt(data, cipher=cipher, key=key, nonce=iv, aad=aad, device=device)
            assert tag == expected_tag, f"{cipher} length {length}"
            opened = opkit.decrypt(sealed, cipher=cipher, key=key, nonce=iv, aad=aad, tag=tag, device=device)
        else:
            sealed = opkit.encrypt(data, cipher=cipher, key=key, iv=iv, device=device)
            opened = opkit.decrypt(sealed, cipher=cipher, key=key, iv=iv, device=device)
        assert isinstance(sealed, bytes) and sealed == expected, f"{cipher} length {length}"
        assert opened == data, f"{cipher} length {length}"


@requires_reference
@pytest.mark.parametrize("cipher", ["aes-256-ctr", "aes-128-gcm", "chacha20-poly1305"])
def test_arrays_keep_their_shape_and_type(rng, cipher):
    key, iv = fresh(rng, cipher)
    x = rng.integers(0, 256, size=(7, 33), dtype=np.uint8)
    expected, _ = reference(cipher, key, iv, x.tobytes())
    result = opkit.encrypt(x, cipher=cipher, key=key, iv=iv)
    out = result[0] if is_aead(cipher) else result
    assert isinstance(out, np.ndarray) and out.shape == x.shape and out.dtype == np.uint8
    assert out.tobytes() == expected


@pytest.mark.parametrize("device", PLACES)
@pytest.mark.parametrize("cipher", ["aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"])
def test_a_forged_message_raises_and_releases_nothing(rng, cipher, device):
    key, iv = fresh(rng, cipher)
    data, aad = rng.bytes(500), rng.bytes(20)
    sealed, tag = opkit.encrypt(data, cipher=cipher, key=key, nonce=iv, aad=aad, device=device)
    forged_tag = bytes([tag[0] ^ 1]) + tag[1:]
    forged_data = sealed[:100] + bytes([sealed[100] ^ 0x40]) + sealed[101:]
    for ciphertext, t, a in ((sealed, forged_tag, aad), (forged_data, tag, aad), (sealed, tag, aad + b"x")):
        with pytest.raises(opkit.AuthenticationError) as failure:
            opkit.decrypt(ciphertext, cipher=cipher, key=key, nonce=iv, aad=a, tag=t, device=device)
        assert failure.value.failed_indices == [0]
        assert "authentication failed" in str(failure.value)
        assert key.hex() not in str(failure.value)


@requires_reference
@pytest.mark.parametrize("device", PLACES)
@pytest.mark.parametrize("cipher", CIPHERS)
def test_batch_with_a_key_and_nonce_per_row_matches_the_reference(rng, cipher, device):
    rows, length = int(rng.integers(1, 30)), int(rng.integers(0, 300))
    x = rng.integers(0, 256, size=(rows, length), dtype=np.uint8)
    pairs = [fresh(rng, cipher) for _ in range(rows)]
    keys = np.frombuffer(b"".join(k for k, _ in pairs), dtype=np.uint8).reshape(rows, -1)
    ivs = np.frombuffer(b"".join(v for _, v in pairs), dtype=np.uint8).reshape(rows, -1)
    result = opkit.encrypt(x, cipher=cipher, key=keys, iv=ivs, device=device)
    out, tags = result if is_aead(cipher) else (result, None)
    assert out.shape == x.shape
    for i, (key, iv) in enumerate(pairs):
        expected, expected_tag = reference(cipher, key, iv, x[i].tobytes())
        assert out[i].tobytes() == expected, f"{cipher} row {i}"
        if tags is not None:
            assert tags[i].tobytes() == expected_tag, f"{cipher} row {i}"
    if tags is None:
        np.testing.assert_array_equal(opkit.decrypt(out, cipher=cipher, key=keys, iv=ivs, device=device), x)
        return
    forged = tags.copy()
    bad = sorted({int(i) for i in rng.integers(0, rows, size=3)})
    forged[bad, 0] ^= 1
    with pytest.raises(opkit.AuthenticationError) as failure:
        opkit.decrypt(out, cipher=cipher, key=keys, iv=ivs, tag=forged, device=device)
    assert failure.value.failed_indices == bad
    np.testing.assert_array_equal(opkit.decrypt(out, cipher=cipher, key=keys, iv=ivs, tag=tags, device=device), x)


def test_bad_arguments_are_clear_errors(rng):
    key, iv = fresh(rng, "aes-128-ctr")
    with pytest.raises(opkit.Error, match="16-byte key"):
        opkit.encrypt(b"abc", cipher="aes-128-ctr", key=key + b"x", iv=iv)
    with pytest.raises(opkit.Error, match="unknown cipher"):
        opkit.encrypt(b"abc", cipher="rot13", key=key, iv=iv)
    with pytest.raises(ValueError, match="exactly one"):
        opkit.encrypt(b"abc", cipher="aes-128-ctr", key=key)
    with pytest.raises(ValueError, match="needs the tag"):
        opkit.decrypt(b"abc", cipher="aes-128-gcm", key=key, nonce=iv[:12])
    with pytest.raises(TypeError, match="str"):
        opkit.encrypt("text", cipher="aes-128-ctr", key=key, iv=iv)


@requires_gpu
@pytest.mark.parametrize("cipher", CIPHERS)
def test_cuda_tensors_are_encrypted_on_their_gpu(rng, cipher):
    torch = pytest.importorskip("torch", reason="the CUDA array test uses PyTorch")
    key, iv = fresh(rng, cipher)
    host = rng.integers(0, 256, size=(3, 100_003), dtype=np.uint8)
    x = torch.from_numpy(host).cuda()
    expected = opkit.encrypt(host.tobytes(), cipher=cipher, key=key, iv=iv, device="host")  # OpenSSL EVP
    expected, expected_tag = expected if is_aead(cipher) else (expected, None)
    result = opkit.encrypt(x, cipher=cipher, key=key, iv=iv)
    out, tag = result if is_aead(cipher) else (result, None)
    assert isinstance(out, torch.Tensor) and out.is_cuda and tuple(out.shape) == host.shape
    assert out.cpu().numpy().tobytes() == expected
    assert tag == expected_tag
    back = opkit.decrypt(out, cipher=cipher, key=key, iv=iv, tag=tag)
    assert torch.equal(back, x)


class _CudaLookingArray:
    """A DLPack producer that says its [2, 16] uint8 memory is on CUDA device 0 (and is never
    exported): what _cipher's checks see of a CUDA key array, on a machine without a GPU."""

    ndim = 2
    shape = (2, 16)

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, **kwargs):
        raise AssertionError("exported where it should have been refused")


def test_batch_keys_on_a_gpu_need_the_data_there_too(rng):
    x = rng.integers(0, 256, size=(2, 40), dtype=np.uint8)
    ivs = rng.integers(0, 256, size=(2, 16), dtype=np.uint8)
    with pytest.raises(TypeError, match="key is a CUDA array but the data is host memory"):
        opkit.encrypt(x, cipher="aes-128-ctr", key=_CudaLookingArray(), iv=ivs)
    keys = rng.integers(0, 256, size=(2, 16), dtype=np.uint8)
    with pytest.raises(TypeError, match="iv is a CUDA array but the data is host memory"):
        opkit.encrypt(x, cipher="aes-128-ctr", key=keys, iv=_CudaLookingArray())


@requires_reference
def test_batch_keys_from_another_host_framework_are_host_keys(rng):
    torch = pytest.importorskip("torch", reason="the host-framework case uses PyTorch CPU tensors")
    cipher, rows = "chacha20-poly1305", 5
    pairs = [fresh(rng, cipher) for _ in range(rows)]
    x = rng.integers(0, 256, size=(rows, 77), dtype=np.uint8)
    keys = torch.tensor([list(k) for k, _ in pairs], dtype=torch.uint8)
    nonces = torch.tensor([list(n) for _, n in pairs], dtype=torch.uint8)
    out, tags = opkit.encrypt(x, cipher=cipher, key=keys, nonce=nonces)
    for i, (key, nonce) in enumerate(pairs):
        assert (out[i].tobytes(), tags[i].tobytes()) == reference(cipher, key, nonce, x[i].tobytes())


def _cuda_rows(torch, rows):
    return torch.from_numpy(np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), -1).copy()).cuda()


@requires_gpu
@requires_reference
@pytest.mark.parametrize("cipher", CIPHERS)
def test_cuda_batches_take_their_keys_and_nonces_on_the_gpu(rng, cipher):
    torch = pytest.importorskip("torch", reason="the CUDA array test uses PyTorch")
    rows, length = 97, 1500
    pairs = [fresh(rng, cipher) for _ in range(rows)]
    host = rng.integers(0, 256, size=(rows, length), dtype=np.uint8)
    x = torch.from_numpy(host).cuda()
    keys, ivs = _cuda_rows(torch, [k for k, _ in pairs]), _cuda_rows(torch, [v for _, v in pairs])
    result = opkit.encrypt(x, cipher=cipher, key=keys, iv=ivs)
    out, tags = result if is_aead(cipher) else (result, None)
    assert out.is_cuda
    sealed = out.cpu().numpy()
    for i, (key, iv) in enumerate(pairs):
        expected, expected_tag = reference(cipher, key, iv, host[i].tobytes())
        assert sealed[i].tobytes() == expected, f"{cipher} row {i}"
        if tags is not None:
            assert tags[i].tobytes() == expected_tag, f"{cipher} row {i}"
    if tags is None:
        assert torch.equal(opkit.decrypt(out, cipher=cipher, key=keys, iv=ivs), x)
        return
    assert torch.equal(opkit.decrypt(out, cipher=cipher, key=keys, iv=ivs, tag=tags), x)
    # Expected tags on the GPU too: compared there, in place.
    assert torch.equal(opkit.decrypt(out, cipher=cipher, key=keys, iv=ivs, tag=torch.from_numpy(tags).cuda()), x)
    forged = tags.copy()
    forged[[3, 50], 0] ^= 1
    for expected in (forged, torch.from_numpy(forged).cuda()):
        with pytest.raises(opkit.AuthenticationError) as failure:
            opkit.decrypt(out, cipher=cipher, key=keys, iv=ivs, tag=expected)
        assert failure.value.failed_indices == [3, 50]


@requires_gpu
def test_cuda_chacha20_ivs_on_the_gpu_have_their_counters_checked_there(rng):
    # Row 5's counter word leaves room for one 64-byte block; its 200 bytes need four.
    torch = pytest.importorskip("torch", reason="the CUDA array test uses PyTorch")
    rows = 8
    keys = torch.from_numpy(rng.integers(0, 256, size=(rows, 32), dtype=np.uint8)).cuda()
    ivs_host = rng.integers(0, 256, size=(rows, 16), dtype=np.uint8)
    ivs_host[:, 3] = 0
    ivs_host[5, :4] = 0xFF
    x = torch.from_numpy(rng.integers(0, 256, size=(rows, 200), dtype=np.uint8)).cuda()
    with pytest.raises(opkit.Error, match="32-bit block counter from 4294967295"):
        opkit.encrypt(x, cipher="chacha20", key=keys, iv=torch.from_numpy(ivs_host).cuda())
