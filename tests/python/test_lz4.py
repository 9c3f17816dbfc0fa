"""opkit.lz4_compress / lz4_decompress against an independent LZ4: the python `lz4` module when
installed, else the `lz4` command-line tool; the test skips, saying why, when neither is here."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import opkit

from conftest import CPU_BACKEND_MISSING, CUDA_MISSING

try:
    import lz4.frame as lz4frame
except ImportError:
    lz4frame = None

LZ4_TOOL = shutil.which("lz4")
REFERENCE_MISSING = None if lz4frame or LZ4_TOOL else "neither the python lz4 module nor the lz4 tool is installed"


def reference_decompress(frame: bytes) -> bytes:
    if lz4frame:
        return lz4frame.decompress(frame)
    return subprocess.run([LZ4_TOOL, "-d", "-c"], input=frame, capture_output=True, check=True).stdout


def reference_compress(data: bytes, *, linked=False) -> bytes:
    if lz4frame:
        return lz4frame.compress(data, compression_level=1, block_linked=linked)
    args = [LZ4_TOOL, "-1", "-c"] + (["-BD"] if linked else [])
    return subprocess.run(args, input=data, capture_output=True, check=True).stdout


def samples() -> list[bytes]:
    rng = np.random.default_rng(int.from_bytes(os.urandom(8), "little"))
    words = rng.choice(np.frombuffer(b"abcdefgh \n0123", dtype=np.uint8), 300000)
    return [b"", b"x", rng.bytes(70000), words.tobytes(), bytes(200000)]


def devices():
    params = [pytest.param(None, id="host")]
    params.append(pytest.param("cpu", id="cpu", marks=pytest.mark.skipif(
        CPU_BACKEND_MISSING is not None, reason=f"no CPU backend: {CPU_BACKEND_MISSING}")))
    params.append(pytest.param("cuda", id="cuda", marks=pytest.mark.skipif(
        CUDA_MISSING is not None, reason=f"no CUDA GPU: {CUDA_MISSING}")))
    return params


@pytest.mark.skipif(REFERENCE_MISSING is not None, reason=REFERENCE_MISSING or "")
@pytest.mark.parametrize("device", devices())
def test_bytes_round_trip_against_reference(device):
    for data in samples():
        for options in ({}, {"block_checksums": True, "content_size": True, "block_size": 256 << 10}):
            frame = opkit.lz4_compress(data, device=device, **options)
            assert isinstance(frame, bytes)
            assert reference_decompress(frame) == data
            assert opkit.lz4_decompress(frame, device=device) == data
        for linked in (False, True):
            assert opkit.lz4_decompress(reference_compress(data, linked=linked), device=device) == data


@pytest.mark.parametrize("device", devices())
def test_numpy_in_numpy_out_and_lists(device):
    data = np.frombuffer(b"opkit lz4 " * 5000, dtype=np.uint8)
    frame = opkit.lz4_compress(data, device=device)
    assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.ndim == 1
    assert np.array_equal(opkit.lz4_decompress(frame, device=device), data)
    frames = opkit.lz4_compress([b"a" * 1000, b"b" * 10], device=device)
    assert opkit.lz4_decompress(frames, device=device) == [b"a" * 1000, b"b" * 10]


def test_bad_input_raises_opkit_error():
    frame = opkit.lz4_compress(b"hello " * 1000)
    with pytest.raises(opkit.Error, match="frame 0"):
        opkit.lz4_decompress(frame[:-3])
    with pytest.raises(opkit.Error, match="max_output"):
        opkit.lz4_decompress(opkit.lz4_compress(bytes(1 << 20), content_size=True), max_size=1000)
    with pytest.raises(ValueError):
        opkit.lz4_compress(b"x", block_size=1000)


@pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no CUDA GPU: {CUDA_MISSING}")
def test_cuda_tensors_stay_on_the_gpu():
    torch = pytest.importorskip("torch")
    data = torch.randint(0, 4, (1 << 20,), dtype=torch.uint8, device="cuda")
    frame = opkit.lz4_compress(data)
    assert frame.is_cuda
    back = opkit.lz4_decompress(frame)
    assert back.is_cuda and torch.equal(back, data)
    if not REFERENCE_MISSING:
        assert reference_decompress(frame.cpu().numpy().tobytes()) == data.cpu().numpy().tobytes()
