"""opkit.torch: opkit's operators and user kernels as torch.library ops. Checked against hashlib
and NumPy on fresh random inputs, with torch.library.opcheck, under torch.compile(fullgraph=True)
and inside CUDA graphs. CPU tensors everywhere; CUDA tensors where a GPU is. Skips without torch."""

import subprocess
import sys

import numpy as np
import pytest

import opkit
from conftest import CPU_BACKEND_MISSING, CUDA_MISSING, captured_cuda_graph, hashlib_digests

torch = pytest.importorskip("torch", reason="PyTorch is not installed (opkit.torch is optional)")
import opkit.torch as ot  # noqa: E402

HAS_CUDA = CUDA_MISSING is None and torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason=f"no CUDA GPU for torch: {CUDA_MISSING or 'torch sees none'}")
needs_cpu_backend = pytest.mark.skipif(
    CPU_BACKEND_MISSING is not None, reason=f"no CPU backend for kernels: {CPU_BACKEND_MISSING}"
)
DEVICES = [pytest.param("cpu"), pytest.param("cuda", marks=needs_cuda)]
# Kernel ops run CPU tensors on the CPU backend (the host compiler), CUDA tensors on the GPU.
KERNEL_DEVICES = [pytest.param("cpu", marks=needs_cpu_backend), pytest.param("cuda", marks=needs_cuda)]


def random_rows(rng, rows, length, device):
    host = rng.integers(0, 256, size=(rows, length), dtype=np.uint8)
    return host, torch.from_numpy(host).to(device)


def test_import_opkit_does_not_import_torch():
    code = "import sys, opkit; assert 'torch' not in sys.modules, 'opkit imported torch'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_interpreter_exits_cleanly_after_using_the_ops():
    # opkit.torch lets go of its kernels, streams and devices at exit; an error there is printed
    # after the program's own output and is easy to miss.
    code = (
        "import torch, opkit.torch as ot\n"
        "x = torch.zeros((2, 8), dtype=torch.uint8)\n"
        "assert ot.sha256(x).shape == (2, 32)\n"
    )
    if CPU_BACKEND_MISSING is None:  # a kernel op's kept kernel and launch methods, too
        code += (
            "op = ot.kernel_op('opkit_exit::twice', '__global__ void twice(float *y, const float *a, int n)"
            " { int i = threadIdx.x; if (i < n) y[i] = 2 * a[i]; }', kernel='twice',"
            " outputs=lambda a: torch.empty_like(a), args=lambda y, a: (y, a, a.numel()), grid=1, block=8)\n"
            "assert op(torch.ones(8)).tolist() == [2.0] * 8\n"
        )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and "Exception ignored" not in run.stderr, run.stderr
    assert "leaked" not in run.stderr, run.stderr  # nanobind's report of objects alive at exit


# ---- torch.ops.opkit.sha256 / sha256d ----


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("algo", ["sha256", "sha256d"])
@pytest.mark.parametrize("length", [0, 1, 55, 56, 64, 80, 119, 200])
def test_registered_op_equals_hashlib(rng, device, algo, length):
    host, x = random_rows(rng, 300, length, device)
    out = getattr(torch.ops.opkit, algo)(x)
    assert out.device == x.device and out.dtype == torch.uint8 and tuple(out.shape) == (300, 32)
    np.testing.assert_array_equal(out.cpu().numpy(), hashlib_digests(host, algo == "sha256d"))


@pytest.mark.parametrize("device", DEVICES)
def test_standard_vectors(device):
    x = torch.tensor([list(b"abc")], dtype=torch.uint8, device=device)
    assert bytes(ot.sha256(x)[0].cpu().tolist()).hex() == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
    empty = torch.empty((1, 0), dtype=torch.uint8, device=device)
    assert bytes(ot.sha256d(empty)[0].cpu().tolist()).hex() == (
        "5df6e0e2761359d30a8275058e299fcc0381534545f55cf43e41983f5d4c9456"
    )


@pytest.mark.parametrize("device", DEVICES)
def test_no_rows_gives_no_digests(device):
    out = ot.sha256(torch.empty((0, 64), dtype=torch.uint8, device=device))
    assert tuple(out.shape) == (0, 32)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("algo", ["sha256", "sha256d"])
def test_out_variant_writes_the_given_tensor(rng, device, algo):
    host, x = random_rows(rng, 513, 80, device)
    out = torch.full((513, 32), 7, dtype=torch.uint8, device=device)
    returned = getattr(ot, algo)(x, out=out)
    assert returned is out
    np.testing.assert_array_equal(out.cpu().numpy(), hashlib_digests(host, algo == "sha256d"))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("algo", ["sha256", "sha256d"])
def test_offsets_op_equals_hashlib(rng, device, algo):
    data = rng.integers(0, 256, size=5000, dtype=np.uint8)
    cuts = np.sort(rng.integers(0, 5000, size=201))
    out = getattr(ot, algo)(torch.from_numpy(data).to(device), offsets=torch.from_numpy(cuts).to(device))
    assert out.device.type == device and tuple(out.shape) == (200, 32)
    expected = hashlib_digests([data[cuts[i] : cuts[i + 1]] for i in range(200)], algo == "sha256d")
    np.testing.assert_array_equal(out.cpu().numpy(), expected)


@pytest.mark.parametrize("device", DEVICES)
def test_offsets_past_the_data_are_refused(device):
    data = torch.zeros(10, dtype=torch.uint8, device=device)
    with pytest.raises(opkit.Error, match="offset"):
        ot.sha256(data, offsets=torch.tensor([0, 4, 11], device=device))
    with pytest.raises(opkit.Error, match="offset"):
        ot.sha256(data, offsets=torch.tensor([0, -1], device=device))
    with pytest.raises(opkit.Error, match="offset"):
        ot.sha256(data, offsets=torch.tensor([5, 2], device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_bad_inputs_name_the_op(device):
    with pytest.raises(ValueError, match=r"opkit::sha256: expected a 2-D \[N, L\] uint8 tensor.*float32"):
        torch.ops.opkit.sha256(torch.zeros((4, 8), device=device))
    with pytest.raises(ValueError, match="opkit::sha256d: expected a 2-D"):
        torch.ops.opkit.sha256d(torch.zeros(8, dtype=torch.uint8, device=device))
    with pytest.raises(ValueError, match="opkit::sha256: the tensor is not contiguous"):
        torch.ops.opkit.sha256(torch.zeros((8, 4), dtype=torch.uint8, device=device).t())
    x = torch.zeros((4, 8), dtype=torch.uint8, device=device)
    with pytest.raises(ValueError, match=r"opkit::sha256_out: out must be a \[4, 32\] uint8 tensor"):
        torch.ops.opkit.sha256_out(x, torch.empty((4, 31), dtype=torch.uint8, device=device))
    with pytest.raises(ValueError, match="opkit::sha256d_offsets: offsets must be a 1-D int64 tensor"):
        ot.sha256d(x.flatten(), offsets=torch.tensor([0, 1], dtype=torch.int32, device=device))


@needs_cuda
def test_out_on_another_device_is_refused():
    x = torch.zeros((4, 8), dtype=torch.uint8, device="cuda")
    with pytest.raises(ValueError, match="opkit::sha256_out: out lives on cpu"):
        ot.sha256(x, out=torch.empty((4, 32), dtype=torch.uint8))


def test_hashes_say_they_have_no_gradient():
    # Integer tensors cannot require grad: torch refuses before any opkit code runs.
    with pytest.raises(RuntimeError, match="floating point"):
        torch.zeros((2, 8), dtype=torch.uint8).requires_grad_()


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_every_sha256_op(rng, device):
    _, x = random_rows(rng, 64, 80, device)
    data = x.flatten()
    offsets = torch.tensor(np.sort(rng.integers(0, data.numel(), size=9)), device=device)
    out = torch.empty((64, 32), dtype=torch.uint8, device=device)
    for algo in ("sha256", "sha256d"):
        torch.library.opcheck(getattr(torch.ops.opkit, algo), (x,))
        torch.library.opcheck(getattr(torch.ops.opkit, f"{algo}_out"), (x, out))
        torch.library.opcheck(getattr(torch.ops.opkit, f"{algo}_offsets"), (data, offsets))


# ---- User kernels as ops: the PyCUDA tutorial's kernels ----

MULTIPLY_THEM = """
__global__ void multiply_them(float *dest, const float *a, const float *b, int n)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dest[i] = a[i] * b[i];
}
"""

DOUBLIFY = """
__global__ void doublify(float *a, int n)
{
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < n) a[idx] *= 2;
}
"""

multiply_them = ot.kernel_op(
    "opkit_test::multiply_them",
    MULTIPLY_THEM,
    kernel="multiply_them",
    outputs=lambda a, b: torch.empty_like(a),
    args=lambda dest, a, b: (dest, a, b, a.numel()),
    grid=lambda a, b: ((a.numel() + 255) // 256,),
    block=256,
)

doublify = ot.kernel_op(
    "opkit_test::doublify",
    DOUBLIFY,
    kernel="doublify",
    schema="(Tensor(a!) a) -> ()",
    args=lambda a: (a, a.numel()),
    grid=lambda a: ((a.numel() + 127) // 128,),
    block=128,
)

SCALE = """
__global__ void scale(float *out, const float *x, float factor, int n)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = factor * x[i];
}
"""

scale = ot.kernel_op(
    "opkit_test::scale",
    SCALE,
    kernel="scale",
    schema="(Tensor x, float factor) -> Tensor",
    outputs=lambda x, factor: torch.empty_like(x),
    args=lambda out, x, factor: (out, x, np.float32(factor), x.numel()),
    grid=lambda x, factor: ((x.numel() + 255) // 256,),
    block=256,
)


@pytest.mark.parametrize("device", KERNEL_DEVICES)
def test_multiply_them_as_an_op(rng, device):
    a = rng.standard_normal(1000).astype(np.float32)
    b = rng.standard_normal(1000).astype(np.float32)
    dest = torch.ops.opkit_test.multiply_them(torch.from_numpy(a).to(device), torch.from_numpy(b).to(device))
    assert dest.device.type == device
    np.testing.assert_array_equal(dest.cpu().numpy(), a * b)


@pytest.mark.parametrize("device", KERNEL_DEVICES)
def test_doublify_mutates_its_argument(rng, device):
    a = rng.standard_normal((4, 4)).astype(np.float32)
    t = torch.from_numpy(a.copy()).to(device)
    assert doublify(t) is None
    np.testing.assert_array_equal(t.cpu().numpy(), 2 * a)


@pytest.mark.parametrize("device", KERNEL_DEVICES)
def test_scalar_arguments_through_the_schema(rng, device):
    x = rng.standard_normal(777).astype(np.float32)
    out = scale(torch.from_numpy(x).to(device), 2.5)
    np.testing.assert_allclose(out.cpu().numpy(), np.float32(2.5) * x, rtol=0)


@pytest.mark.parametrize("device", KERNEL_DEVICES)
def test_empty_input_launches_nothing(device):
    out = multiply_them(torch.empty(0, device=device), torch.empty(0, device=device))
    assert tuple(out.shape) == (0,)


@pytest.mark.parametrize("device", KERNEL_DEVICES)
def test_kernel_compiles_once_per_device(rng, device):
    ops = ot.kernel_op(
        f"opkit_test::square_{device}",
        "__global__ void square(float *y, const float *x, int n)"
        " { int i = threadIdx.x; if (i < n) y[i] = x[i] * x[i]; }",
        kernel="square",
        outputs=lambda x: torch.empty_like(x),
        args=lambda y, x: (y, x, x.numel()),
        grid=1,
        block=64,
    )
    x = torch.arange(10, dtype=torch.float32, device=device)
    torch.testing.assert_close(ops(x), x * x)
    first = ops._opkit_source.on(x.get_device(), x)
    torch.testing.assert_close(ops(x + 1), (x + 1) * (x + 1))
    assert ops._opkit_source.on(x.get_device(), x) is first
    assert len(ops._opkit_source._kernels) == 1


@pytest.mark.parametrize("device", KERNEL_DEVICES)
def test_opcheck_kernel_ops(rng, device):
    a = torch.randn(300, device=device)
    b = torch.randn(300, device=device)
    torch.library.opcheck(multiply_them, (a, b))
    torch.library.opcheck(doublify, (a.clone(),))
    torch.library.opcheck(scale, (a, 0.5))


@pytest.mark.parametrize("device", KERNEL_DEVICES)
def test_kernel_op_bad_inputs_name_the_op(device):
    x = torch.zeros((8, 4), device=device)
    with pytest.raises(ValueError, match="opkit_test::multiply_them: kernel argument #2 is not contiguous"):
        multiply_them(x.t().contiguous(), x.t())
    bad_rule = ot.kernel_op(
        f"opkit_test::bad_rule_{device}",
        MULTIPLY_THEM,
        kernel="multiply_them",
        outputs=lambda a, b: torch.empty((a.shape[1], a.shape[0]), device=a.device).t(),
        args=lambda dest, a, b: (dest, a, b, a.numel()),
        grid=1,
        block=32,
    )
    with pytest.raises(ValueError, match="bad_rule_.*: kernel argument #0 is not contiguous"):
        bad_rule(x, x)
    with pytest.raises(TypeError, match=r"float_arg_.*: kernel argument #2 is a float"):
        ot.kernel_op(
            f"opkit_test::float_arg_{device}",
            SCALE,
            kernel="scale",
            schema="(Tensor x, float factor) -> Tensor",
            outputs=lambda x, factor: torch.empty_like(x),
            grid=1,
            block=32,
        )(x, 2.0)


@needs_cuda
def test_kernel_op_refuses_a_tensor_on_another_device():
    a = torch.ones(8, device="cuda")
    with pytest.raises(ValueError, match="opkit_test::multiply_them: kernel argument #2 lives on cpu"):
        multiply_them(a, torch.ones(8))


def test_kernel_op_name_needs_a_namespace():
    with pytest.raises(ValueError, match="an op name is 'namespace::name', got 'scale'"):
        ot.kernel_op("scale", SCALE, kernel="scale", outputs=lambda x: torch.empty_like(x), grid=1, block=1)


def test_kernel_op_with_a_wrong_argument_count_is_refused_by_the_kernel():
    if CPU_BACKEND_MISSING is not None:
        pytest.skip(f"no CPU backend for kernels: {CPU_BACKEND_MISSING}")
    too_few = ot.kernel_op(
        "opkit_test::too_few",
        MULTIPLY_THEM,
        kernel="multiply_them",
        outputs=lambda a, b: torch.empty_like(a),  # no n: the kernel takes 4 parameters
        grid=1,
        block=32,
    )
    x = torch.zeros(8)
    with pytest.raises(opkit.Error, match="multiply_them"):
        too_few(x, x)


@pytest.mark.parametrize("device", KERNEL_DEVICES)
def test_kernel_op_has_no_gradient(device):
    a = torch.randn(16, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"opkit_test::multiply_them has no gradient"):
        multiply_them(a, a).sum().backward()


@needs_cpu_backend
def test_kernel_op_on_inputs_that_require_grad_computes_and_refuses_only_backward():
    a = torch.randn(300, requires_grad=True)
    b = torch.randn(300)
    product = multiply_them(a, b)  # forward is fine: only a gradient through the op is refused
    assert product.requires_grad and product.grad_fn is not None
    torch.testing.assert_close(product.detach(), a.detach() * b, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match=r"opkit_test::multiply_them has no gradient"):
        torch.autograd.grad(product.sum(), a)
    with pytest.raises(RuntimeError, match=r"opkit_test::scale has no gradient"):
        (scale(a, 2.0) * 3).sum().backward()


@needs_cpu_backend
def test_kernel_op_without_grad_gives_plain_outputs():
    a = torch.randn(64, requires_grad=True)
    for context in (torch.no_grad, torch.inference_mode):
        with context():
            out = multiply_them(a, a)
        assert not out.requires_grad and out.grad_fn is None
        torch.testing.assert_close(out, a.detach() * a.detach(), rtol=0, atol=0)
    out = multiply_them(a.detach(), a.detach())
    assert not out.requires_grad and out.grad_fn is None


@needs_cpu_backend
def test_kernel_op_refuses_gradient_under_torch_func_and_compile():
    b = torch.randn(32)
    with pytest.raises(RuntimeError, match=r"opkit_test::multiply_them has no gradient"):
        torch.func.grad(lambda x: multiply_them(x, b).sum())(torch.randn(32))
    torch._dynamo.reset()
    compiled = torch.compile(lambda x, y: multiply_them(x, y) * 2, fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(b, b), b * b * 2)  # no grad: compiles and runs
    with pytest.raises(Exception, match=r"opkit_test::multiply_them has no gradient"):
        compiled(torch.randn(32, requires_grad=True), b).sum().backward()


@needs_cpu_backend
def test_kernel_op_goes_through_dispatch_modes_and_functionalization():
    # Without grad, an op's autograd kernel calls its kernel directly, but only where the
    # dispatcher would have gone straight there: a TorchDispatchMode, a fake tensor or
    # functionalization still sees the op, and plain calls after them still launch.
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    a = torch.randn(100)
    with Recorder():
        out = multiply_them(a, a)
    assert torch.ops.opkit_test.multiply_them.default in seen
    torch.testing.assert_close(out, a * a, rtol=0, atol=0)
    with FakeTensorMode() as mode:
        fake = multiply_them(mode.from_tensor(a), mode.from_tensor(a))
    assert type(fake).__name__ == "FakeTensor" and fake.shape == a.shape
    torch.testing.assert_close(torch.func.functionalize(lambda x: multiply_them(x, x))(a), a * a, rtol=0, atol=0)
    torch.testing.assert_close(multiply_them(a, a), a * a, rtol=0, atol=0)


def test_kernel_op_with_outputs_that_writes_its_arguments_is_refused_at_definition():
    with pytest.raises(ValueError, match=r"opkit_test::writes_and_returns: an op with an outputs rule .* marks one"):
        ot.kernel_op(
            "opkit_test::writes_and_returns",
            SCALE,
            kernel="scale",
            schema="(Tensor(a!) x, float factor) -> Tensor",
            outputs=lambda x, factor: torch.empty_like(x),
            grid=1,
            block=32,
        )
    assert not hasattr(torch.ops.opkit_test, "writes_and_returns")


@needs_cpu_backend
def test_kernel_op_arguments_beyond_the_common_kinds_take_the_general_rules():
    # Tensor subclasses (a Parameter) are packed by the general rules; a Python int past 32 bits
    # and a bool are refused there, naming the op.
    weight = torch.nn.Parameter(torch.randn(50))
    torch.testing.assert_close(multiply_them(weight, weight).detach(), (weight * weight).detach(), rtol=0, atol=0)
    wide = ot.kernel_op(
        "opkit_test::wide_n",
        MULTIPLY_THEM,
        kernel="multiply_them",
        outputs=lambda a, b: torch.empty_like(a),
        args=lambda dest, a, b: (dest, a, b, 1 << 40),
        grid=1,
        block=32,
    )
    with pytest.raises(OverflowError, match=r"opkit_test::wide_n: argument #3: 1099511627776 does not fit"):
        wide(torch.ones(4), torch.ones(4))
    flag = ot.kernel_op(
        "opkit_test::bool_n",
        MULTIPLY_THEM,
        kernel="multiply_them",
        outputs=lambda a, b: torch.empty_like(a),
        args=lambda dest, a, b: (dest, a, b, True),
        grid=1,
        block=32,
    )
    with pytest.raises(TypeError, match=r"opkit_test::bool_n: argument #3: a Python bool is ambiguous"):
        flag(torch.ones(4), torch.ones(4))


@needs_cpu_backend
def test_launch_tensors_packs_the_common_kinds_and_declines_the_rest():
    # Kernel.launch_tensors, kernel ops' launch: it launches only when every argument is a
    # contiguous plain tensor of the given device, a 32-bit Python int or a NumPy scalar.
    kernel = multiply_them._opkit_source.on(-1, torch.ones(1))[0].__self__
    a, b = torch.arange(8.0), torch.full((8,), 3.0)

    def launch(*args, device=-1):
        return kernel.launch_tensors(args, device, torch.Tensor, np.generic, (1, 1, 1), (8, 1, 1), 0, None)

    dest = torch.zeros(8)
    assert launch(dest, a, b, 8) is True
    torch.testing.assert_close(dest, a * b, rtol=0, atol=0)
    dest = torch.zeros(8)
    assert launch(dest, a, b, np.int32(5)) is True  # a NumPy scalar, by value: only 5 written
    torch.testing.assert_close(dest, torch.cat([a[:5] * b[:5], torch.zeros(3)]), rtol=0, atol=0)
    declined = [
        (dest, torch.arange(16.0)[::2], b, 8),  # strided
        (dest, a, b, 1 << 31),  # past 32 bits
        (dest, a, b, True),  # a bool
        (dest, a, b, 8.0),  # a Python float
        (torch.nn.Parameter(dest), a, b, 8),  # a tensor subclass
    ]
    for args in declined:
        before = dest.clone()
        assert launch(*args) is False
        torch.testing.assert_close(dest, before, rtol=0, atol=0)  # nothing launched
    assert launch(dest, a, b, 8, device=0) is False  # the tensors are not on CUDA device 0
    # needs_tensor (RawKernel's torch path, whose stream is torch's): no tensor, no launch.
    null = np.uint64(0)
    assert kernel.launch_tensors((null, null, null, 8), -1, torch.Tensor, np.generic, (1, 1, 1), (8, 1, 1), 0, None,
                                 True) is False
    # A raw stream handle of 0 (the legacy default stream) is the kernel's default stream.
    dest = torch.zeros(8)
    assert kernel.launch_tensors((dest, a, b, 8), -1, torch.Tensor, np.generic, (1, 1, 1), (8, 1, 1), 0, 0,
                                 True) is True
    torch.testing.assert_close(dest, a * b, rtol=0, atol=0)


# ---- torch.compile ----


def mining_pipeline(prefix: torch.Tensor, base: torch.Tensor, count: int, target: int):
    """Nonces -> 80-byte headers (prefix + little-endian nonce) -> SHA-256d -> the best nonce and how
    many meet the target; the score is the digest's top 32 bits as Bitcoin orders them (bytes 31..28)."""
    nonces = base + torch.arange(count, dtype=torch.int64, device=prefix.device)
    shifts = torch.arange(0, 32, 8, dtype=torch.int64, device=prefix.device)
    nonce_bytes = ((nonces.unsqueeze(1) >> shifts) & 0xFF).to(torch.uint8)
    headers = torch.cat([prefix.expand(count, -1), nonce_bytes], dim=1)
    digests = torch.ops.opkit.sha256d(headers).to(torch.int64)
    score = (digests[:, 31] << 24) | (digests[:, 30] << 16) | (digests[:, 29] << 8) | digests[:, 28]
    best = torch.argmin(score)
    return base + best, score.min(), (score <= target).sum()


def reference_pipeline(prefix: np.ndarray, base: int, count: int, target: int):
    nonces = (base + np.arange(count)).astype("<u4")
    headers = np.concatenate([np.broadcast_to(prefix, (count, prefix.size)), nonces.view(np.uint8).reshape(-1, 4)], 1)
    digests = hashlib_digests(headers, double=True).astype(np.int64)
    score = (digests[:, 31] << 24) | (digests[:, 30] << 16) | (digests[:, 29] << 8) | digests[:, 28]
    best = int(np.argmin(score))
    return base + best, int(score[best]), int((score <= target).sum())


@pytest.mark.parametrize("device", DEVICES)
def test_compiled_pipeline_has_no_graph_break_and_matches_eager(rng, device):
    prefix_host = rng.integers(0, 256, size=76, dtype=np.uint8)
    prefix = torch.from_numpy(prefix_host).to(device)
    base_value = int(rng.integers(0, 2**31))
    base = torch.tensor(base_value, dtype=torch.int64, device=device)
    count, target = 4096, 1 << 22
    torch._dynamo.reset()
    explained = torch._dynamo.explain(mining_pipeline)(prefix, base, count, target)
    assert explained.graph_break_count == 0, explained.break_reasons
    assert explained.graph_count == 1
    compiled = torch.compile(mining_pipeline, fullgraph=True, backend=COMPILE_BACKEND)
    got = [int(v) for v in compiled(prefix, base, count, target)]
    eager = [int(v) for v in mining_pipeline(prefix, base, count, target)]
    assert got == eager == list(reference_pipeline(prefix_host, base_value, count, target))


@pytest.mark.parametrize("device", DEVICES)
def test_compiled_out_variant_writes_the_given_tensor(rng, device):
    def f(x, out):
        ot.sha256(x ^ 0x5A, out=out)
        return out[:, 0].sum()

    host, x = random_rows(rng, 100, 40, device)
    out = torch.zeros((100, 32), dtype=torch.uint8, device=device)
    torch._dynamo.reset()
    assert torch._dynamo.explain(f)(x, out).graph_break_count == 0
    total = torch.compile(f, fullgraph=True, backend=COMPILE_BACKEND)(x, out)
    expected = hashlib_digests(host ^ 0x5A)
    np.testing.assert_array_equal(out.cpu().numpy(), expected)
    assert int(total) == int(expected[:, 0].astype(np.int64).sum())


@pytest.mark.parametrize("device", KERNEL_DEVICES)
def test_compiled_kernel_ops_match_eager(rng, device):
    def f(a, b):
        c = multiply_them(a + 1, b)
        doublify(c)
        return scale(c, 0.25).sum()

    a = torch.randn(1000, device=device)
    b = torch.randn(1000, device=device)
    torch._dynamo.reset()
    assert torch._dynamo.explain(f)(a, b).graph_break_count == 0
    torch.testing.assert_close(torch.compile(f, fullgraph=True, backend=COMPILE_BACKEND)(a, b), f(a, b))


# The default (inductor) generates C++ for CPU graphs and Triton for CUDA ones; OPKIT_COMPILE_BACKEND
# overrides it (e.g. aot_eager where no host compiler works for inductor).
COMPILE_BACKEND = __import__("os").environ.get("OPKIT_COMPILE_BACKEND", "inductor")


# ---- CUDA: streams and CUDA graphs ----


@needs_cuda
def test_ops_run_on_the_current_stream(rng):
    side = torch.cuda.Stream()
    host, _ = random_rows(rng, 1 << 16, 64, "cpu")
    pinned = torch.from_numpy(host).pin_memory()
    with torch.cuda.stream(side):
        x = torch.empty((1 << 16, 64), dtype=torch.uint8, device="cuda")
        torch.cuda._sleep(50_000_000)  # keeps the side stream busy: a hash on another stream would race
        x.copy_(pinned, non_blocking=True)
        out = torch.ops.opkit.sha256(x)
        y = multiply_them(torch.ones(1 << 16, device="cuda") * 3, torch.full((1 << 16,), 2.0, device="cuda"))
        result, product = out.cpu(), y.cpu()
    np.testing.assert_array_equal(result.numpy(), hashlib_digests(host))
    assert (product == 6).all()


@needs_cuda
def test_cuda_graph_replays_opkit_ops_on_new_inputs(rng):
    rows = 4096
    x = torch.empty((rows, 80), dtype=torch.uint8, device="cuda")
    digests = torch.empty((rows, 32), dtype=torch.uint8, device="cuda")
    a = torch.empty(rows, device="cuda")
    b = torch.empty(rows, device="cuda")
    product = torch.empty(rows, device="cuda")

    def step():
        ot.sha256d(x, out=digests)
        product.copy_(multiply_them(a, b))
        doublify(product)

    graph, _ = captured_cuda_graph(step)
    for _ in range(3):
        host, fresh = random_rows(rng, rows, 80, "cuda")
        ha = rng.standard_normal(rows).astype(np.float32)
        hb = rng.standard_normal(rows).astype(np.float32)
        x.copy_(fresh)
        a.copy_(torch.from_numpy(ha))
        b.copy_(torch.from_numpy(hb))
        graph.replay()
        torch.cuda.synchronize()
        np.testing.assert_array_equal(digests.cpu().numpy(), hashlib_digests(host, double=True))
        np.testing.assert_array_equal(product.cpu().numpy(), 2 * (ha * hb))


# ---- docs/torch.md's examples run as written ----


def test_docs_examples_run():
    import pathlib
    import re

    text = (pathlib.Path(__file__).parents[2] / "docs" / "torch.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 4
    import types

    module = types.ModuleType("docs_torch")  # a real module: dynamo looks functions' modules up
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    ran = 0
    for block in blocks:
        if "CUDAGraph" in block:
            if not HAS_CUDA:
                continue
            namespace["new_headers"] = torch.randint(0, 256, (4096, 80), dtype=torch.uint8, device="cuda")
        exec(compile(block, "docs/torch.md", "exec"), namespace)
        ran += 1
    if "CUDAGraph" in "".join(blocks) and HAS_CUDA:
        torch.cuda.synchronize()
        host = namespace["new_headers"].cpu().numpy()
        np.testing.assert_array_equal(namespace["digests"].cpu().numpy(), hashlib_digests(host, double=True))
    assert ran >= 3
