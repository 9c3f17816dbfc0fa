"""The PyCUDA tutorials ported line by line: `pycuda` becomes `opkit`, nothing else changes.
Runs on the default device (the GPU, else the CPU backend)."""

import numpy
import pytest

from conftest import CPU_BACKEND_MISSING, CUDA_MISSING

pytestmark = pytest.mark.skipif(
    CUDA_MISSING is not None and CPU_BACKEND_MISSING is not None,
    reason=f"no device runs kernels here: {CUDA_MISSING}; {CPU_BACKEND_MISSING}",
)


def test_test_kernel_gives_0_2_4_to_510():
    import opkit.autoinit  # noqa: F401
    import opkit.driver as cuda
    from opkit.compiler import SourceModule

    mod = SourceModule("""
    __global__ void test_kernel(float *a)
    {
      int idx = threadIdx.x + threadIdx.y * 4;
      a[idx] = 2.0 * idx;
    }
    """)
    a_gpu = cuda.mem_alloc(256 * 4)
    func = mod.get_function("test_kernel")
    func(a_gpu, block=(256, 1, 1), grid=(1, 1))
    a = numpy.empty(256, dtype=numpy.float32)
    cuda.memcpy_dtoh(a, a_gpu)
    assert a.tolist() == [2.0 * i for i in range(256)]


def test_doublify_with_mem_alloc_memcpy_and_inout():
    import opkit.autoinit  # noqa: F401
    import opkit.driver as cuda
    from opkit.compiler import SourceModule

    a = numpy.random.randn(4, 4)
    a = a.astype(numpy.float32)
    a_gpu = cuda.mem_alloc(a.nbytes)
    cuda.memcpy_htod(a_gpu, a)
    mod = SourceModule("""
      __global__ void doublify(float *a)
      {
        int idx = threadIdx.x + threadIdx.y*4;
        a[idx] *= 2;
      }
      """)
    func = mod.get_function("doublify")
    func(a_gpu, block=(4, 4, 1))
    a_doubled = numpy.empty_like(a)
    cuda.memcpy_dtoh(a_doubled, a_gpu)
    numpy.testing.assert_array_equal(a_doubled, 2 * a)

    b = a.copy()
    func(cuda.InOut(b), block=(4, 4, 1))
    numpy.testing.assert_array_equal(b, 2 * a)
    cuda.Context.synchronize()
