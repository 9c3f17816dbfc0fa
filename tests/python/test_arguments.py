"""How Python values become kernel arguments (no device needed): NumPy scalars by value, Python
ints as int32, ambiguous Python floats and bools refused, launch shapes."""

import struct

import numpy as np
import pytest

from opkit._kernels import _Call, _dim3


def pack(value):
    return _Call(None, None).pack(value, 0)


def test_numpy_scalars_pass_their_exact_bytes():
    assert pack(np.int8(-2)) == struct.pack("=b", -2)
    assert pack(np.uint16(65535)) == struct.pack("=H", 65535)
    assert pack(np.float32(1.5)) == struct.pack("=f", 1.5)
    assert pack(np.float64(-2.25)) == struct.pack("=d", -2.25)
    assert pack(np.uint64(2**64 - 1)) == struct.pack("=Q", 2**64 - 1)


def test_structured_numpy_scalar_passes_as_its_bytes():
    pair = np.zeros((), dtype=[("a", "<i4"), ("b", "<f8")])[()]
    pair["a"], pair["b"] = 7, 0.5
    assert pack(pair) == struct.pack("<id", 7, 0.5)


def test_python_int_is_int32_and_range_checked():
    assert pack(-7) == struct.pack("=i", -7)
    assert pack(2**31 - 1) == struct.pack("=i", 2**31 - 1)
    with pytest.raises(OverflowError, match="numpy.int64"):
        pack(2**31)


def test_python_float_and_bool_are_refused_with_a_hint():
    with pytest.raises(TypeError, match="numpy.float32"):
        pack(1.5)
    with pytest.raises(TypeError, match="numpy.bool_"):
        pack(True)


def test_unknown_argument_type_names_its_position():
    with pytest.raises(TypeError, match="parameter #0"):
        pack("text")


def test_launch_shapes():
    assert _dim3(256, "block") == (256, 1, 1)
    assert _dim3((4, 4), "grid") == (4, 4, 1)
    assert _dim3((2, 3, 4), "block") == (2, 3, 4)
    with pytest.raises(ValueError):
        _dim3((0, 1), "grid")
    with pytest.raises(ValueError):
        _dim3((1, 1, 1, 1), "grid")
    with pytest.raises(TypeError):
        _dim3("x", "block")


# ---- The fast path for PyTorch CUDA tensors (checked here with stand-ins: no torch, no GPU) ----


class _StandInTensor:
    """What the fast path reads of a torch CUDA tensor; a DLPack exchange raises _DlpackUsed."""

    is_cuda = True

    def __init__(self, ordinal=0, contiguous=True, address=0x7F0000001000):
        self.ordinal, self.contiguous, self.address = ordinal, contiguous, address

    def get_device(self):
        return self.ordinal

    def is_contiguous(self):
        return self.contiguous

    def numel(self):
        return 64

    def data_ptr(self):
        return self.address

    def __dlpack__(self, **kwargs):
        raise _DlpackUsed

    def __dlpack_device__(self):
        return (2, self.ordinal)


class _DlpackUsed(Exception):
    pass


class _StandInGpu:
    is_gpu, ordinal = True, 0

    def __repr__(self):
        return "<Device cuda:0>"


class _StandInStream:
    def __init__(self, handle):
        self.handle = handle


@pytest.fixture
def stand_in_torch(monkeypatch):
    import sys
    import types

    import opkit._kernels

    torch = types.ModuleType("torch")
    torch.Tensor = _StandInTensor
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(opkit._kernels, "torch_current_stream", lambda index: 0x5EED)


def test_torch_tensor_on_torchs_current_stream_passes_its_address_without_dlpack(stand_in_torch):
    call = _Call(_StandInGpu(), _StandInStream(0x5EED))
    assert call.pack(_StandInTensor(), 0) == struct.pack("=Q", 0x7F0000001000)


def test_torch_tensor_on_another_stream_goes_through_dlpack(stand_in_torch):
    # The exchange orders torch's pending work before the launch's stream: it must not be skipped.
    call = _Call(_StandInGpu(), _StandInStream(0xBEEF))
    with pytest.raises(_DlpackUsed):
        call.pack(_StandInTensor(), 0)


def test_torch_fast_path_refuses_other_devices_and_strided_tensors(stand_in_torch):
    call = _Call(_StandInGpu(), _StandInStream(0x5EED))
    with pytest.raises(ValueError, match=r"argument #3: the array lives on cuda:1"):
        call.pack(_StandInTensor(ordinal=1), 3)
    with pytest.raises(ValueError, match=r"argument #0: the array is not C-contiguous"):
        call.pack(_StandInTensor(contiguous=False), 0)
