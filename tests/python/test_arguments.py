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
