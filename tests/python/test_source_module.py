"""SourceModule kernels on every device this machine has (a CUDA GPU, the CPU backend), each result
checked against NumPy on fresh random inputs: arguments by value, device memory, In/Out/InOut,
bare host arrays, streams, prepared calls, and compile and launch errors."""

import contextlib

import numpy as np
import pytest

import opkit
import opkit.compiler
import opkit.driver
from conftest import CUDA_COMPILER_MISSING, kernel_devices

SAXPY = r"""
__global__ void saxpy(float *out, const float *x, const float *y, float a, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
"""

MIXED = r"""
#include <stdint.h>
__global__ void mixed(int64_t *out, int8_t s8, uint16_t u16, int32_t s32, uint64_t u64, double d)
{
  out[0] = s8; out[1] = u16; out[2] = s32; out[3] = (int64_t)u64; out[4] = (int64_t)(d * 2);
}
"""

PAIR = r"""
struct Pair { int a; double b; };
__global__ void pair_sum(double *out, Pair p) { out[0] = p.a + p.b; }
"""


def assert_saxpy(out, a, x, y):
    """out == a * x + y within one float32 rounding of the product and one of the sum: the GPU fuses
    them (one rounding), the CPU backend's compiler may not, and NumPy does not."""
    product = np.float64(a) * x.astype(np.float64)
    exact = product + y.astype(np.float64)
    bound = np.finfo(np.float32).eps * (np.abs(product) + np.abs(exact))
    error = np.abs(out.astype(np.float64) - exact)
    assert np.all(error <= bound), f"worst element {int(np.argmax(error - bound))}: {error.max()} > bound"


@pytest.fixture(params=kernel_devices())
def device(request):
    return opkit.get_device(request.param)


def test_saxpy_with_device_memory_matches_numpy(device, rng):
    n = 1000
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    a = np.float32(rng.standard_normal())
    mod = opkit.SourceModule(SAXPY, device=device)
    x_gpu, y_gpu, out_gpu = (opkit.mem_alloc(n * 4, device=device) for _ in range(3))
    opkit.memcpy_htod(x_gpu, x)
    opkit.memcpy_htod(y_gpu, y)
    mod.get_function("saxpy")(out_gpu, x_gpu, y_gpu, a, np.int32(n), block=(128, 1, 1), grid=((n + 127) // 128, 1))
    out = np.empty(n, dtype=np.float32)
    opkit.memcpy_dtoh(out, out_gpu)
    assert_saxpy(out, a, x, y)


def test_in_out_and_bare_host_arrays_match_numpy(device, rng):
    n = 777
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    saxpy = opkit.SourceModule(SAXPY, device=device).get_function("saxpy")
    out = np.zeros(n, dtype=np.float32)
    saxpy(opkit.Out(out), opkit.In(x), opkit.In(y), np.float32(3), n, block=256, grid=(n + 255) // 256)
    assert_saxpy(out, 3, x, y)
    bare = np.zeros(n, dtype=np.float32)
    saxpy(bare, x, y, np.float32(-1), n, block=256, grid=(n + 255) // 256)  # bare arrays: InOut
    assert_saxpy(bare, -1, x, y)


def test_scalars_of_every_width_pass_by_value(device, rng):
    mixed = opkit.SourceModule(MIXED, device=device).get_function("mixed")
    out = np.zeros(5, dtype=np.int64)
    u64 = int(rng.integers(0, 2**62))
    mixed(opkit.Out(out), np.int8(-5), np.uint16(65000), -123456, np.uint64(u64), np.float64(1.25), block=1)
    assert out.tolist() == [-5, 65000, -123456, u64, 2]


def test_struct_passes_by_value_as_a_structured_numpy_scalar(device):
    pair_sum = opkit.SourceModule(PAIR, device=device).get_function("pair_sum")
    pair = np.zeros((), dtype=np.dtype([("a", "<i4"), ("b", "<f8")], align=True))[()]
    pair["a"], pair["b"] = 40, 2.5
    out = np.zeros(1, dtype=np.float64)
    pair_sum(opkit.Out(out), pair, block=1)
    assert out[0] == 42.5


def test_wrong_argument_count_or_size_is_an_error(device):
    saxpy = opkit.SourceModule(SAXPY, device=device).get_function("saxpy")
    buf = opkit.mem_alloc(16, device=device)
    with pytest.raises(opkit.Error, match="argument"):
        saxpy(buf, buf, buf, np.float32(1), block=1)  # 4 of 5
    with pytest.raises(opkit.Error, match="argument 4"):
        saxpy(buf, buf, buf, np.float32(1), np.int64(4), block=1)  # int64 for int


def test_prepared_call_matches_numpy(device, rng):
    n = 300
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    saxpy = opkit.SourceModule(SAXPY, device=device).get_function("saxpy").prepare("PPPfi")
    bufs = [opkit.mem_alloc(n * 4, device=device) for _ in range(3)]
    opkit.memcpy_htod(bufs[1], x)
    opkit.memcpy_htod(bufs[2], y)
    saxpy.prepared_call((3, 1), (128, 1, 1), bufs[0], bufs[1], bufs[2], 0.5, n)
    out = np.empty(n, dtype=np.float32)
    opkit.memcpy_dtoh(out, bufs[0])
    assert_saxpy(out, 0.5, x, y)
    seconds = saxpy.prepared_timed_call((3, 1), (128, 1, 1), bufs[0], bufs[1], bufs[2], 0.5, n)()
    assert seconds >= 0


def test_stream_launch_and_time_kernel(device, rng):
    n = 4096
    x = rng.standard_normal(n).astype(np.float32)
    saxpy = opkit.SourceModule(SAXPY, device=device).get_function("saxpy")
    stream = device.create_stream()
    x_gpu, out_gpu = opkit.mem_alloc(n * 4, device=device), opkit.mem_alloc(n * 4, device=device)
    opkit.memcpy_htod_async(x_gpu, x, stream=stream)
    seconds = saxpy(out_gpu, x_gpu, x_gpu, np.float32(2), n, block=256, grid=n // 256, stream=stream, time_kernel=True)
    assert seconds >= 0
    out = np.empty(n, dtype=np.float32)
    opkit.memcpy_dtoh_async(out, out_gpu, stream=stream)
    stream.synchronize()
    assert_saxpy(out, 2, x, x)


class _ProtocolStream:
    """A stream from another library that speaks only the CUDA stream protocol."""

    def __init__(self, value):
        self.value = value

    def __cuda_stream__(self):
        return self.value


def test_objects_with_the_cuda_stream_protocol_are_streams(device, rng):
    n = 1024
    x = rng.standard_normal(n).astype(np.float32)
    saxpy = opkit.SourceModule(SAXPY, device=device).get_function("saxpy")
    owner = device.create_stream()
    foreign = _ProtocolStream((0, owner.handle))
    x_gpu, out_gpu = opkit.to_device(x, device=device), opkit.empty(n, np.float32, device=device)
    saxpy(out_gpu, x_gpu, x_gpu, np.float32(3), np.int32(n), block=256, grid=n // 256, stream=foreign)
    owner.synchronize()
    assert_saxpy(out_gpu.get(), 3, x, x)
    for bad, message in (((1, owner.handle), "version 1"), ((0,), "version, handle"), ("0", "version, handle")):
        with pytest.raises(TypeError, match=message):
            saxpy(out_gpu, x_gpu, x_gpu, np.float32(3), np.int32(n), block=256, grid=n // 256, stream=_ProtocolStream(bad))


def test_with_stream_sends_launches_without_stream_to_it(device, rng):
    n = 512
    x = rng.standard_normal(n).astype(np.float32)
    saxpy = opkit.SourceModule(SAXPY, device=device).get_function("saxpy")
    x_gpu, out_gpu = opkit.to_device(x, device=device), opkit.empty(n, np.float32, device=device)
    outer, inner = device.create_stream(), device.create_stream()
    assert opkit._opkit._entered_stream(device) is None
    with outer:
        assert opkit._opkit._entered_stream(device).handle == outer.handle
        with inner as entered:
            assert entered.handle == inner.handle
            assert opkit._opkit._entered_stream(device).handle == inner.handle
            saxpy(out_gpu, x_gpu, x_gpu, np.float32(2), np.int32(n), block=128, grid=n // 128)
        assert opkit._opkit._entered_stream(device).handle == outer.handle
    assert opkit._opkit._entered_stream(device) is None
    inner.synchronize()
    assert_saxpy(out_gpu.get(), 2, x, x)


def test_external_stream_borrows_a_handle(device, rng):
    owner = device.create_stream()
    borrowed = opkit.ExternalStream(owner.handle, device=device)
    assert borrowed.handle == owner.handle and borrowed.device == device
    n = 256
    x = rng.standard_normal(n).astype(np.float32)
    out = opkit.empty(n, np.float32, device=device)
    opkit.SourceModule(SAXPY, device=device).get_function("saxpy")(
        out, opkit.to_device(x, device=device), opkit.to_device(x, device=device), np.float32(1), np.int32(n),
        block=256, stream=borrowed)
    borrowed.synchronize()
    assert_saxpy(out.get(), 1, x, x)
    with pytest.raises(TypeError, match="native handle"):
        opkit.ExternalStream("0x10", device=device)


def test_stream_wait_event_orders_work_across_streams(device, rng):
    # A chain of saxpy steps alternating between two streams, each step ordered after the one
    # before by an event, not by the host: the result is right only if every wait took effect.
    n, steps = 1 << 16, 8
    x = rng.standard_normal(n).astype(np.float32)
    saxpy = opkit.SourceModule(SAXPY, device=device).get_function("saxpy")
    streams = [device.create_stream(), device.create_stream()]
    buffers = [opkit.to_device(x, device=device), opkit.empty(n, np.float32, device=device)]
    streams[0].synchronize()
    expected = x.copy()
    for step in range(steps):
        stream, src, dst = streams[step % 2], buffers[step % 2], buffers[1 - step % 2]
        saxpy(dst, src, src, np.float32(0.5), np.int32(n), block=256, grid=n // 256, stream=stream)
        expected = (np.float32(0.5) * expected + expected).astype(np.float32)
        streams[1 - step % 2].wait_event(stream.record_event())
    streams[steps % 2].synchronize()
    np.testing.assert_allclose(buffers[steps % 2].get(), expected, rtol=1e-5)
    assert streams[0].query() and streams[1].done


def test_event_query_record_and_wait(device):
    event = device.create_event()
    assert event.query(), "an event never recorded has nothing to wait for"
    stream = device.create_stream()
    assert event.record(stream) is not None
    event.synchronize()
    assert event.query() and event.done and event.device == device
    event.wait(stream)  # nothing pending: returns, and later work on the stream is unaffected
    default_recorded = device.create_event().record()
    default_recorded.synchronize()
    other = device.create_stream()
    other.wait_stream(stream)
    other.synchronize()
    assert other.query()
    for other_device in (d for d in opkit.devices() if d != device):  # on a GPU machine: the CPU backend
        with pytest.raises(opkit.Error, match="another device"):
            other_device.create_stream().wait_event(event)


def test_device_arrays_have_the_cuda_array_interface_on_a_gpu_only(device, rng):
    x = rng.standard_normal(100).astype(np.float32)
    array = opkit.to_device(x, device=device)
    if not device.is_gpu:
        assert not hasattr(array, "__cuda_array_interface__")
        return
    interface = array.__cuda_array_interface__
    assert interface["version"] == 3 and interface["shape"] == (100,) and interface["typestr"] == "<f4"
    assert interface["data"] == (array.ptr, False) and interface["stream"] == 1
    out = np.empty_like(x)
    opkit.memcpy_dtoh(out, interface["data"][0])
    np.testing.assert_array_equal(out, x)


GLOBALS = r"""
__constant__ float coeffs[4];
__device__ unsigned int launches;
__global__ void scale_by_lane(float *out, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) atomicAdd(&launches, 1u);
  if (i < n) out[i] = coeffs[i % 4] * x[i];
}
"""

EXTERN_C_KERNEL = r"""
extern "C" __global__ void add_one(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}
"""


@contextlib.contextmanager
def default_device(device):
    """PyCUDA-style copies to a raw address act on the default device."""
    previous = opkit.default_device()
    opkit.set_default_device(device)
    try:
        yield
    finally:
        opkit.set_default_device(previous)


def test_get_global_reads_and_writes_module_variables(device, rng):
    n = 1000
    module = opkit.SourceModule(GLOBALS, device=device)
    coeffs_address, coeffs_bytes = module.get_global("coeffs")
    launches_address, launches_bytes = module.get_global("launches")
    assert (coeffs_bytes, launches_bytes) == (16, 4)
    coeffs = rng.standard_normal(4).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    out = opkit.empty(n, np.float32, device=device)
    kernel = module.get_function("scale_by_lane")
    with default_device(device):
        opkit.memcpy_htod(coeffs_address, coeffs)
        opkit.memset_d32(launches_address, 0, 1)
        for _ in range(3):
            kernel(out, opkit.to_device(x, device=device), np.int32(n), block=128, grid=(n + 127) // 128)
        launches = np.zeros(1, dtype=np.uint32)
        opkit.memcpy_dtoh(launches, launches_address)
    np.testing.assert_array_equal(out.get(), coeffs[np.arange(n) % 4] * x)
    assert launches[0] == 3
    with pytest.raises(opkit.Error, match="no __device__ or __constant__ variable 'missing'"):
        module.get_global("missing")


def test_binary_files_load_on_a_gpu_and_are_refused_elsewhere(device, tmp_path):
    missing = tmp_path / "absent.cubin"
    with pytest.raises(opkit.Error, match="no file") as raised:
        opkit.module_from_file(missing, device=device)
    assert raised.value.kind == "not_found"
    garbage = tmp_path / "garbage.cubin"
    garbage.write_bytes(b"\x7fELF not really")
    with pytest.raises(opkit.Error, match="not a binary the") as raised:
        opkit.module_from_file(garbage, device=device)
    assert raised.value.kind == "load"
    if not device.is_gpu:
        if CUDA_COMPILER_MISSING is not None:
            pytest.skip(f"no NVRTC to make a cubin: {CUDA_COMPILER_MISSING}")
        cubin = tmp_path / "k.cubin"
        cubin.write_bytes(opkit.compiler.compile(EXTERN_C_KERNEL, arch="sm_90"))
        with pytest.raises(opkit.Error, match="cpu.* backend loads"):
            opkit.module_from_file(cubin, device=device)
        return
    cubin, ptx = tmp_path / "k.cubin", tmp_path / "k.ptx"
    cubin.write_bytes(opkit.compiler.compile(EXTERN_C_KERNEL))
    ptx.write_bytes(opkit.compiler.compile(EXTERN_C_KERNEL, target="ptx"))
    a = np.arange(300, dtype=np.int32)
    loaded = [opkit.module_from_file(cubin, device=device), opkit.module_from_file(ptx, device=device),
              opkit.driver.module_from_buffer(cubin.read_bytes(), device=device)]
    for module in loaded:
        target = a.copy()
        module.get_function("add_one")(opkit.InOut(target), np.int32(300), block=128, grid=3)
        np.testing.assert_array_equal(target, a + 1)
    target = a.copy()
    opkit.RawModule(path=str(cubin), device=device).get_function("add_one")((3,), (128,), (opkit.InOut(target), 300))
    np.testing.assert_array_equal(target, a + 1)
    assert opkit.module_from_file(cubin, device=device).kernel_names == ["add_one"]
    assert opkit.module_from_file(cubin, device=device).target == device.arch


def test_memset_fills_device_memory(device):
    buf = opkit.mem_alloc(64, device=device)
    opkit.memset_d32(buf, 0xDEADBEEF, 16)
    out = np.empty(16, dtype=np.uint32)
    opkit.memcpy_dtoh(out, buf)
    assert (out == 0xDEADBEEF).all()
    opkit.memset_d8(buf, 7, 64)
    opkit.memcpy_dtoh(out, buf)
    assert (out.view(np.uint8) == 7).all()


def test_template_kernel_through_name_expressions(device, rng):
    source = "template <class T> __global__ void scale(T *a, T k) { a[threadIdx.x] *= k; }"
    mod = opkit.SourceModule(source, device=device, name_expressions=["scale<double>"])
    a = rng.standard_normal(32)
    expected = a * 3
    mod.get_function("scale<double>")(opkit.InOut(a), np.float64(3), block=32)
    np.testing.assert_allclose(a, expected)


def test_defines_and_headers_reach_the_source(device):
    source = '#include "k.h"\n__global__ void k(int *out) { out[0] = VALUE + FROM_HEADER; }'
    mod = opkit.SourceModule(source, device=device, defines={"VALUE": 40}, headers={"k.h": "#define FROM_HEADER 2"})
    out = np.zeros(1, dtype=np.int32)
    mod.get_function("k")(out, block=1)
    assert out[0] == 42


def test_compile_error_carries_the_log_with_the_line(device):
    with pytest.raises(opkit.CompileError) as caught:
        source = "__global__ void broken(int *a)\n{\n  a[0] = NOT_DEFINED;\n}\n"
        opkit.SourceModule(source, device=device, name="broken.cu")
    error = caught.value
    assert isinstance(error, opkit.Error) and isinstance(error, RuntimeError)
    assert error.kind == "compile" and "NOT_DEFINED" in error.log
    assert "broken.cu" in str(error) and "NOT_DEFINED" in str(error)


def test_unknown_kernel_name_lists_the_kernels(device):
    mod = opkit.SourceModule(SAXPY, device=device)
    assert mod.kernel_names == ["saxpy"]
    with pytest.raises(opkit.Error, match="saxpy") as caught:
        mod.get_function("sxapy")
    assert caught.value.kind == "not_found"


def test_device_arrays_round_trip_and_pass_to_kernels(device, rng):
    host = rng.standard_normal((3, 50)).astype(np.float32)
    a = opkit.to_device(host, device=device)
    assert a.shape == (3, 50) and a.dtype == np.float32 and a.nbytes == host.nbytes and a.device == device
    double = opkit.SourceModule("__global__ void d(float *a) { a[blockIdx.x * 50 + threadIdx.x] *= 2; }", device=device)
    double.get_function("d")(a, block=50, grid=3)
    np.testing.assert_array_equal(a.get(), 2 * host)
    assert opkit.empty((0, 4), np.int64, device=device).get().shape == (0, 4)
    assert opkit.empty(7, np.uint16, device=device).shape == (7,)
    with pytest.raises(TypeError, match="DLPack"):
        opkit.empty(3, np.dtype("U3"), device=device)


def test_cupy_style_raw_kernel_and_raw_module_match_numpy(device, rng):
    n = 1000
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    a = np.float32(rng.standard_normal())
    x_gpu, y_gpu = opkit.to_device(x, device=device), opkit.to_device(y, device=device)
    out = opkit.empty(n, np.float32, device=device)
    saxpy = opkit.RawKernel(SAXPY, "saxpy", device=device)
    saxpy(((n + 127) // 128,), (128,), (out, x_gpu, y_gpu, a, np.int32(n)))
    assert_saxpy(out.get(), a, x, y)
    assert saxpy.num_regs >= 0 and saxpy.max_threads_per_block >= 128

    source = "template <class T> __global__ void scale(T *a, T k) { a[threadIdx.x] *= k; }"
    module = opkit.RawModule(code=source, name_expressions=["scale<double>"], device=device)
    v = rng.standard_normal(32)
    expected = v * 3
    module.get_function("scale<double>")(1, 32, (opkit.InOut(v), np.float64(3)))
    np.testing.assert_allclose(v, expected)


def test_raw_kernel_and_module_refuse_what_they_cannot_take(device):
    with pytest.raises(opkit.Error, match="saxpy") as caught:
        opkit.RawKernel(SAXPY, "sxapy", device=device)
    assert caught.value.kind == "not_found"
    with pytest.raises(opkit.CompileError):
        opkit.RawKernel("__global__ void k(int *a) { a[0] = NOPE; }", "k", device=device)
    saxpy = opkit.RawKernel(SAXPY, "saxpy", device=device)
    with pytest.raises(TypeError, match="tuple"):
        saxpy((1,), (1,), np.int32(3))
    with pytest.raises(TypeError, match="exactly one of code="):
        opkit.RawModule(code=SAXPY, path="kernel.cubin")
    with pytest.raises(TypeError, match="exactly one of code="):
        opkit.RawModule()
    with pytest.raises(TypeError, match="code= only"):
        opkit.RawModule(path="kernel.cubin", options=("-O3",), device=device)
