"""Per-call host time of registered opkit ops on CPU tensors, for machines without a GPU: the
dispatcher and Python cost of a call is the same as on CUDA tensors, less the launch's own. Kernel
ops run on opkit's CPU backend, whose launch costs a few microseconds by itself (the first row);
the registered no-op ops are the dispatcher's floor; register_autograd's row is what kernel ops
with outputs paid per call before they had their own autograd kernel (issue 19).

    OMP_NUM_THREADS=1 python bench/python/per_call_cpu.py [--calls 4000] [--rounds 15]

Each row: min and median over --rounds rounds of --calls back-to-back calls, the rows interleaved
so that a busy moment of a shared machine hits them all alike. One OpenMP thread keeps the CPU
backend's launch steady where other work shares the cores.
"""

from __future__ import annotations

import argparse
import statistics
import struct
import timeit

import torch

import opkit
import opkit.torch as ot

DOUBLIFY = """
__global__ void doublify(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] *= 2; }
"""
TWICE = """
__global__ void twice(float *y, const float *a, int n)
{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2 * a[i]; }
"""


_libraries: list = []  # an op lives as long as its Library object


def cases() -> dict:
    f = torch.ones(64)
    x = torch.randint(0, 256, (1, 64), dtype=torch.uint8)
    digests = torch.empty((1, 32), dtype=torch.uint8)
    doublify = ot.kernel_op("opkit_cpu_bench::doublify", DOUBLIFY, kernel="doublify", schema="(Tensor(a!) a) -> ()",
                            args=lambda a: (a, a.numel()), grid=1, block=64)
    twice = ot.kernel_op("opkit_cpu_bench::twice", TWICE, kernel="twice", outputs=lambda a: torch.empty_like(a),
                         args=lambda y, a: (y, a, a.numel()), grid=1, block=64)
    kernel = opkit.SourceModule(DOUBLIFY, device=opkit.Device.cpu()).get_function("doublify")._kernel
    packed = [struct.pack("=Q", f.data_ptr()), struct.pack("=i", 64)]
    floor = torch.library.Library("opkit_cpu_bench", "FRAGMENT")
    _libraries.append(floor)
    floor.define("noop(Tensor(a!) a) -> ()")
    floor.impl("noop", lambda a: None, "CPU")
    for op in ("new_output", "new_output_autograd"):
        floor.define(f"{op}(Tensor a) -> Tensor")
        floor.impl(op, torch.empty_like, "CPU")
    torch.library.register_autograd("opkit_cpu_bench::new_output_autograd", lambda ctx, grad: None,
                                    setup_context=lambda ctx, inputs, output: None, lib=floor)
    # OpOverloads, as kernel_op returns them (a torch.ops.ns.op packet call resolves the overload too).
    noop = torch.ops.opkit_cpu_bench.noop.default
    new_output = torch.ops.opkit_cpu_bench.new_output.default
    new_output_autograd = torch.ops.opkit_cpu_bench.new_output_autograd.default
    return {
        "Kernel.launch alone (packed arguments), CPU backend": lambda: kernel.launch(packed, (1, 1, 1), (64, 1, 1), 0),
        "kernel_op in place (doublify [64])": lambda: doublify(f),
        "kernel_op with a new output (twice [64])": lambda: twice(f),
        "torch.ops.opkit.sha256_out [1, 64] (OpenSSL)": lambda: torch.ops.opkit.sha256_out(x, digests),
        "registered Python op doing nothing (floor)": lambda: noop(f),
        "registered Python op: empty_like": lambda: new_output(f),
        "... with a register_autograd kernel": lambda: new_output_autograd(f),
        "torch f.mul_(1) [64]": lambda: f.mul_(1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    rows = cases()
    for fn in rows.values():
        for _ in range(300):
            fn()
    samples: dict = {name: [] for name in rows}
    for _ in range(args.rounds):
        for name, fn in rows.items():
            samples[name].append(timeit.timeit(fn, number=args.calls) / args.calls * 1e6)
    print(f"torch {torch.__version__}, opkit {opkit.__version__}, CPU tensors; us per call")
    print(f"{'':52s} {'min':>7s} {'median':>7s}")
    for name, times in samples.items():
        print(f"{name:52s} {min(times):7.2f} {statistics.median(times):7.2f}")


if __name__ == "__main__":
    main()
