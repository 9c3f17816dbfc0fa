"""CuPy arrays through opkit without a host round trip: sha256 of a CuPy array is a CuPy array
equal to hashlib's digests; kernels take CuPy arrays zero-copy on CuPy's current stream.
Skips without CuPy or without a CUDA GPU."""

import numpy as np
import pytest

import opkit
from conftest import CUDA_MISSING, hashlib_digests

pytestmark = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no CUDA GPU: {CUDA_MISSING}")
cupy = pytest.importorskip("cupy")


@pytest.mark.parametrize("double", [False, True])
@pytest.mark.parametrize("length", [0, 32, 64, 77])
def test_cupy_in_cupy_out_equal_to_hashlib(rng, double, length):
    host = rng.integers(0, 256, size=(2000, length), dtype=np.uint8)
    out = (opkit.sha256d if double else opkit.sha256)(cupy.asarray(host))
    assert isinstance(out, cupy.ndarray) and out.dtype == cupy.uint8 and out.shape == (2000, 32)
    np.testing.assert_array_equal(cupy.asnumpy(out), hashlib_digests(host, double))


def test_cupy_current_stream_is_respected(rng):
    host = rng.integers(0, 256, size=(1 << 16, 32), dtype=np.uint8)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x = cupy.asarray(host)
        out = opkit.sha256(x)
        result = cupy.asnumpy(out)
    np.testing.assert_array_equal(result, hashlib_digests(host))


def test_digests_come_from_cupys_memory_pool(rng):
    host = rng.integers(0, 256, size=(1 << 16, 32), dtype=np.uint8)
    x = cupy.asarray(host)
    pool = cupy.get_default_memory_pool()
    before = pool.used_bytes()
    out = opkit.sha256(x)
    assert pool.used_bytes() == before + (1 << 16) * 32
    np.testing.assert_array_equal(cupy.asnumpy(out), hashlib_digests(host))


def test_kernel_takes_cupy_arrays(rng):
    mod = opkit.SourceModule("__global__ void sq(double *a, int n) { int i = threadIdx.x; if (i < n) a[i] *= a[i]; }",
                             device="cuda")
    host = rng.standard_normal(100)
    a = cupy.asarray(host)
    mod.get_function("sq")(a, 100, block=128)
    np.testing.assert_allclose(cupy.asnumpy(a), host * host)


class Producer:
    """A DLPack producer opkit does not know: results come back as opkit.DeviceArray."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_unknown_producer_gets_a_device_array_any_framework_can_take(rng):
    host = rng.integers(0, 256, size=(300, 40), dtype=np.uint8)
    out = opkit.sha256(Producer(cupy.asarray(host)))
    assert isinstance(out, opkit.DeviceArray) and out.shape == (300, 32) and out.device.is_gpu
    np.testing.assert_array_equal(out.get(), hashlib_digests(host))
    np.testing.assert_array_equal(cupy.asnumpy(cupy.from_dlpack(out)), hashlib_digests(host))
