"""Where the host time of one small opkit call goes: cProfile over back-to-back calls of the
registered kernel ops (in place, and with a new output), the sha256_out op and opkit.RawKernel on
a torch CUDA tensor, top functions by own time. For tuning per-call overhead (issue 19); not a
benchmark.

    python bench/python/profile_calls.py [--calls 20000] [--top 18]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats

import numpy as np
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--top", type=int, default=18)
    args = parser.parse_args()
    f = torch.ones(64, device="cuda")
    x = torch.randint(0, 256, (64, 64), dtype=torch.uint8, device="cuda")
    out = torch.empty((64, 32), dtype=torch.uint8, device="cuda")
    doublify = ot.kernel_op(
        "opkit_profile::doublify", DOUBLIFY, kernel="doublify", schema="(Tensor(a!) a) -> ()",
        args=lambda a: (a, a.numel()), grid=1, block=64,
    )
    twice = ot.kernel_op(
        "opkit_profile::twice", TWICE, kernel="twice", outputs=lambda a: torch.empty_like(a),
        args=lambda y, a: (y, a, a.numel()), grid=1, block=64,
    )
    raw = opkit.RawKernel(DOUBLIFY, "doublify", device="cuda")
    n64 = np.int32(64)
    cases = {
        "kernel_op doublify": lambda: doublify(f),
        "kernel_op twice (new output)": lambda: twice(f),
        "torch.ops.opkit.sha256_out": lambda: torch.ops.opkit.sha256_out(x, out),
        "opkit.RawKernel on a torch tensor": lambda: raw((1,), (64,), (f, n64)),
    }
    for name, fn in cases.items():
        for _ in range(100):
            fn()
        torch.cuda.synchronize()
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(args.calls):
            fn()
        profile.disable()
        torch.cuda.synchronize()
        print(f"\n==== {name}: {args.calls} calls")
        pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
