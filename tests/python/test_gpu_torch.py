"""PyTorch CUDA tensors through opkit without a host round trip: sha256/sha256d of a CUDA tensor
is a CUDA tensor equal to hashlib's digests; kernels take tensors zero-copy; the producer's
current stream is respected. Skips without PyTorch or without a CUDA GPU."""

import numpy as np
import pytest

import opkit
from conftest import CUDA_MISSING, hashlib_digests

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no CUDA GPU: {CUDA_MISSING}"),
    pytest.mark.skipif(not torch.cuda.is_available(), reason="PyTorch sees no CUDA device"),
]


def random_rows(rng, rows, length):
    host = rng.integers(0, 256, size=(rows, length), dtype=np.uint8)
    return host, torch.from_numpy(host).cuda()


@pytest.mark.parametrize("length", [0, 1, 32, 55, 64, 80, 200])
@pytest.mark.parametrize("double", [False, True])
def test_cuda_tensor_in_cuda_tensor_out_equal_to_hashlib(rng, length, double):
    host, x = random_rows(rng, 1000, length)
    out = (opkit.sha256d if double else opkit.sha256)(x)
    assert isinstance(out, torch.Tensor) and out.is_cuda and out.device == x.device
    assert out.dtype == torch.uint8 and tuple(out.shape) == (1000, 32)
    np.testing.assert_array_equal(out.cpu().numpy(), hashlib_digests(host, double))


def test_many_rows_on_the_gpu(rng):
    host, x = random_rows(rng, 1 << 20, 32)
    out = opkit.sha256(x)
    sample = rng.choice(len(host), 2000, replace=False)
    np.testing.assert_array_equal(out.cpu().numpy()[sample], hashlib_digests(host[sample]))


def test_producer_stream_is_respected(rng):
    # Data written on a side stream and hashed there: without ordering on that stream, the hash
    # would read the tensor before the fill lands.
    side = torch.cuda.Stream()
    host, _ = random_rows(rng, 1 << 16, 64)
    pinned = torch.from_numpy(host).pin_memory()
    with torch.cuda.stream(side):
        x = torch.empty((1 << 16, 64), dtype=torch.uint8, device="cuda")
        torch.cuda._sleep(50_000_000)  # keep the stream busy so that a race would show
        x.copy_(pinned, non_blocking=True)
        out = opkit.sha256(x)
        result = out.cpu()
    np.testing.assert_array_equal(result.numpy(), hashlib_digests(host))


def test_explicit_stream_argument(rng):
    host, x = random_rows(rng, 4096, 48)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    out = opkit.sha256(x, stream=side)
    torch.cuda.current_stream().wait_stream(side)
    np.testing.assert_array_equal(out.cpu().numpy(), hashlib_digests(host))


def test_variable_lengths_on_the_gpu(rng):
    data = rng.integers(0, 256, size=10000, dtype=np.uint8)
    cuts = np.sort(rng.integers(0, 10000, size=301)).astype(np.uint64)
    out = opkit.sha256(torch.from_numpy(data).cuda(), offsets=torch.from_numpy(cuts.view(np.int64)).cuda())
    assert out.is_cuda and tuple(out.shape) == (300, 32)
    expected = hashlib_digests([data[cuts[i] : cuts[i + 1]] for i in range(300)])
    np.testing.assert_array_equal(out.cpu().numpy(), expected)


def test_cpu_tensor_gives_cpu_tensor(rng):
    host = rng.integers(0, 256, size=(100, 20), dtype=np.uint8)
    out = opkit.sha256(torch.from_numpy(host))
    assert isinstance(out, torch.Tensor) and not out.is_cuda
    np.testing.assert_array_equal(out.numpy(), hashlib_digests(host))


def test_kernel_takes_cuda_tensors_zero_copy(rng):
    mod = opkit.SourceModule(r"""
    __global__ void axpy(float *y, const float *x, float a, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] += a * x[i];
    }""", device="cuda")
    n = 100_000
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    expected = y + 2 * x
    mod.get_function("axpy")(y, x, np.float32(2), n, block=256, grid=(n + 255) // 256)
    torch.testing.assert_close(y, expected)


def test_kernel_runs_on_torch_stream(rng):
    mod = opkit.SourceModule("__global__ void inc(int *a) { a[threadIdx.x] += 1; }", device="cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        a = torch.zeros(64, dtype=torch.int32, device="cuda")
        mod.get_function("inc")(a, block=64, stream=side)
        mod.get_function("inc")(a, block=64, stream=torch.cuda.current_stream())
        result = a.cpu()
    assert (result == 2).all()


def test_kernel_without_stream_follows_torchs_current_stream():
    # No stream= and no `with opkit stream:`: a launch with a torch tensor argument goes to torch's
    # current stream, so torch work queued after it on that stream sees its result.
    mod = opkit.SourceModule("__global__ void inc(int *a) { a[threadIdx.x] += 1; }", device="cuda")
    device = opkit.get_device("cuda")
    side = torch.cuda.Stream()
    a = torch.zeros(64, dtype=torch.int32, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        assert opkit._kernels._launch_stream(device, None, (a,)).handle == side.cuda_stream
        torch.cuda._sleep(20_000_000)  # the side stream is busy: work on another stream would run first
        a.fill_(5)
        mod.get_function("inc")(a, block=64)
        result = a.cpu()
    assert (result == 6).all()
    assert opkit._kernels._launch_stream(device, None, (np.int32(1),)) is None


def test_cuda_array_interface_reaches_torch(rng):
    x = rng.integers(0, 255, size=(8, 16), dtype=np.uint8)
    array = opkit.to_device(x, device="cuda")
    array.synchronize()
    tensor = torch.as_tensor(array, device="cuda")
    assert tensor.data_ptr() == array.ptr
    assert (tensor.cpu().numpy() == x).all()


def test_non_contiguous_tensor_is_refused():
    mod = opkit.SourceModule("__global__ void k(float *a) { a[0] = 1; }", device="cuda")
    x = torch.zeros((8, 8), device="cuda").t()
    with pytest.raises(ValueError, match="contiguous"):
        mod.get_function("k")(x, block=1)
    with pytest.raises(opkit.Error, match="contiguous"):
        opkit.sha256(torch.zeros((8, 8), dtype=torch.uint8, device="cuda").t())


def test_output_outlives_the_input_and_comes_from_torchs_allocator(rng):
    host, x = random_rows(rng, 256, 16)
    out = opkit.sha256(x)
    del x
    torch.cuda.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), hashlib_digests(host))
    zeros = torch.zeros((1 << 20, 32), dtype=torch.uint8, device="cuda")
    before = torch.cuda.memory_allocated()
    outs = [opkit.sha256(zeros) for _ in range(8)]
    assert torch.cuda.memory_allocated() == before + 8 * (32 << 20)  # 8 outputs of 32 MiB, torch's
    del outs
    assert torch.cuda.memory_allocated() == before  # and back to its cache


def test_device_argument_is_checked_for_cuda_tensors(rng):
    _, x = random_rows(rng, 16, 32)
    with pytest.raises(opkit.Error, match="copy it to the host"):
        opkit.sha256(x, device="host")
    with pytest.raises(opkit.Error, match="drop device="):
        opkit.sha256(x, device="cpu")


def test_launch_on_torch_tensors_takes_the_fast_path_and_others_the_general_one(monkeypatch):
    # Contiguous CUDA tensors of the kernel's GPU, NumPy scalars and 32-bit ints, no stream: packed
    # directly (no _Call); anything else (an int past 32 bits, a strided tensor) goes through
    # _Call, whose checks and messages it keeps.
    mod = opkit.SourceModule(r"""
    __global__ void scale(float *y, const float *x, float a, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = a * x[i];
    }""", device="cuda")
    scale = mod.get_function("scale")
    x, y = torch.randn(1000, device="cuda"), torch.empty(1000, device="cuda")
    real_call = opkit._kernels._Call
    monkeypatch.setattr(opkit._kernels, "_Call", lambda *a: pytest.fail("the fast path was not taken"))
    scale(y, x, np.float32(3), 1000, block=256, grid=4)
    torch.testing.assert_close(y, 3 * x)
    monkeypatch.setattr(opkit._kernels, "_Call", real_call)
    with pytest.raises(OverflowError, match="32-bit int"):
        scale(y, x, np.float32(3), 1 << 40, block=256, grid=4)
    with pytest.raises(ValueError, match="not C-contiguous"):
        scale(y, torch.randn(2000, device="cuda")[::2], np.float32(3), 1000, block=256, grid=4)
