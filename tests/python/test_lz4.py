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


def batch_devices():
    # Batches run where the items' memory is the kernels' memory: the CPU backend for host arrays,
    # a GPU for its own arrays (CuPy here; torch tensors take the same path).
    return [
        pytest.param("cpu", id="cpu", marks=pytest.mark.skipif(
            CPU_BACKEND_MISSING is not None, reason=f"no CPU backend: {CPU_BACKEND_MISSING}")),
        pytest.param("cuda", id="cuda", marks=pytest.mark.skipif(
            CUDA_MISSING is not None, reason=f"no CUDA GPU: {CUDA_MISSING}")),
    ]


def on(device, array):
    """(items as the batch takes them, device= for the calls, back to NumPy)."""
    if device == "cpu":
        return array, "cpu", lambda a: a
    cupy = pytest.importorskip("cupy")
    return cupy.asarray(array), None, cupy.asnumpy


@pytest.mark.skipif(REFERENCE_MISSING is not None, reason=REFERENCE_MISSING or "")
@pytest.mark.parametrize("device", batch_devices())
def test_a_list_of_arrays_on_one_device_is_one_batch_equal_to_item_by_item(device, monkeypatch):
    items = [np.frombuffer(data, dtype=np.uint8) for data in samples()]
    placed = [on(device, item) for item in items]
    arrays, where, to_numpy = [p[0] for p in placed], placed[0][1], placed[0][2]
    calls = []
    for name in ("lz4_compress_batch", "lz4_decompress_batch"):
        real = getattr(opkit._opkit, name)
        monkeypatch.setattr(opkit._opkit, name, lambda *a, _real=real, _name=name: calls.append(_name) or _real(*a))
    frames = opkit.lz4_compress(arrays, device=where, block_checksums=True)
    assert calls == ["lz4_compress_batch"]  # one call for the whole list
    for frame, item in zip(frames, items):
        assert reference_decompress(to_numpy(frame).tobytes()) == item.tobytes()
    theirs = [on(device, np.frombuffer(reference_compress(item.tobytes()), dtype=np.uint8))[0] for item in items]
    back = opkit.lz4_decompress(theirs, device=where)
    assert calls == ["lz4_compress_batch", "lz4_decompress_batch"]
    assert [to_numpy(b).tobytes() for b in back] == [item.tobytes() for item in items]


@pytest.mark.parametrize("device", batch_devices())
def test_a_bad_frame_in_a_batch_names_its_item(device):
    good = opkit.lz4_compress(b"good " * 1000)
    bad = good[:-5]
    arrays = [on(device, np.frombuffer(f, dtype=np.uint8))[0] for f in (good, good, bad)]
    with pytest.raises(opkit.Error, match="batch item 2"):
        opkit.lz4_decompress(arrays, device=on(device, np.zeros(1, np.uint8))[1])


@pytest.mark.skipif(REFERENCE_MISSING is not None, reason=REFERENCE_MISSING or "")
@pytest.mark.parametrize("device", batch_devices())
def test_data_and_offsets_form_is_one_batch_whose_items_match_the_reference(device):
    items = samples()
    offsets = np.cumsum([0] + [len(item) for item in items], dtype=np.int64)
    data, where, to_numpy = on(device, np.frombuffer(b"".join(items), dtype=np.uint8))
    frames, frame_offsets = opkit.lz4_compress(data, offsets=offsets, device=where, block_checksums=True)
    assert frame_offsets.dtype == np.uint64 and len(frame_offsets) == len(items) + 1
    packed = to_numpy(frames).tobytes()
    assert len(packed) == frame_offsets[-1]
    for i, item in enumerate(items):
        assert reference_decompress(packed[frame_offsets[i]:frame_offsets[i + 1]]) == item
    # Their frames, with offsets given on the data's device when it is a GPU.
    theirs = [reference_compress(item) for item in items]
    their_offsets = np.cumsum([0] + [len(f) for f in theirs], dtype=np.uint64)
    frames_in = on(device, np.frombuffer(b"".join(theirs), dtype=np.uint8))[0]
    offsets_in = on(device, their_offsets.astype(np.int64))[0] if device == "cuda" else their_offsets
    back, back_offsets = opkit.lz4_decompress(frames_in, offsets=offsets_in, device=where)
    assert list(back_offsets) == list(offsets)
    assert to_numpy(back).tobytes() == b"".join(items)


@pytest.mark.parametrize("device", batch_devices())
def test_data_and_offsets_form_rejects_bad_offsets_and_names_a_bad_item(device):
    good = opkit.lz4_compress(b"good " * 1000)
    data, where, _ = on(device, np.frombuffer(good * 3, dtype=np.uint8))
    n = len(good)
    with pytest.raises(opkit.Error, match="must not decrease"):
        opkit.lz4_decompress(data, offsets=[0, n, n - 1], device=where)
    with pytest.raises(opkit.Error, match="past the"):
        opkit.lz4_decompress(data, offsets=[0, 3 * n + 1], device=where)
    with pytest.raises(opkit.Error, match="at least 2"):
        opkit.lz4_decompress(data, offsets=[0], device=where)
    with pytest.raises(ValueError, match="negative"):
        opkit.lz4_decompress(data, offsets=[-1, n], device=where)
    with pytest.raises(opkit.Error, match="batch item 1"):
        opkit.lz4_decompress(data, offsets=[0, n, 2 * n - 5], device=where)
    if device == "cpu":
        with pytest.raises(ValueError, match="CPU backend"):
            opkit.lz4_decompress(good * 2, offsets=[0, n, 2 * n])  # host data, no device=
