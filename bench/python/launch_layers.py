"""Where the time of a small launch from Python goes: the same 64-thread kernel on a torch CUDA
tensor launched through each layer of opkit's Python launch path, from the public call down to the
bare binding with prepacked arguments, beside CuPy's RawKernel (issue 19's yardstick) and the
pieces each layer adds (torch's current-stream lookup). Host wall time per call, the median of
--rounds rounds of --calls back-to-back calls, the layers interleaved within each round.

    python bench/python/launch_layers.py [--calls 5000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import struct

import numpy as np
import torch

import opkit
from cuda_timing import loop_ms, require_cuda

DOUBLIFY = "__global__ void doublify(float *a, int n) { int i = threadIdx.x; if (i < n) a[i] *= 2; }"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    if not require_cuda():
        return 2
    f = torch.ones(64, device="cuda")
    n64 = np.int32(64)
    raw = opkit.RawKernel(DOUBLIFY, "doublify", device="cuda")
    function = raw._function
    kernel = function._kernel
    stream = kernel.device.borrow_stream(torch.cuda.current_stream().cuda_stream)
    packed = [struct.pack("=Q", f.data_ptr()), n64.tobytes()]
    grid3, block3 = (1, 1, 1), (64, 1, 1)
    layers = {
        "opkit.RawKernel(grid, block, args)": lambda: raw((1,), (64,), (f, n64)),
        "Function(*args, grid=, block=)": lambda: function(f, n64, grid=(1,), block=(64,)),
        "Kernel.launch_tensors (C++ packing)": lambda: kernel.launch_tensors(
            (f, n64), 0, torch.Tensor, np.generic, grid3, block3, 0, stream
        ),
        "Kernel.launch (prepacked bytes)": lambda: kernel.launch(packed, grid3, block3, 0, stream),
        "torch._C._cuda_getCurrentRawStream(0)": lambda: torch._C._cuda_getCurrentRawStream(0),
        "f.data_ptr()": lambda: f.data_ptr(),
        "torch f.mul_(1)": lambda: f.mul_(1),
    }
    try:
        import cupy

        cupy_kernel = cupy.RawKernel('extern "C" ' + DOUBLIFY, "doublify")
        g = cupy.ones(64, dtype=cupy.float32)
        layers["cupy.RawKernel (yardstick)"] = lambda: cupy_kernel((1,), (64,), (g, n64))
    except ImportError as error:
        print(f"no CuPy: {error}")
    samples: dict = {name: [] for name in layers}
    for fn in layers.values():
        for _ in range(50):
            fn()
    for _ in range(args.rounds):
        for name, fn in layers.items():
            samples[name].append(loop_ms(fn, args.calls) * 1e3)
    cupy_us = statistics.median(samples["cupy.RawKernel (yardstick)"]) if "cupy.RawKernel (yardstick)" in samples else None
    print(f"{torch.cuda.get_device_name()}; torch {torch.__version__}, opkit {opkit.__version__}")
    print(f"{'layer':44s} {'us/call':>8s} {'x CuPy':>7s}")
    for name, times in samples.items():
        us = statistics.median(times)
        ratio = f"{us / cupy_us:7.2f}" if cupy_us else ""
        print(f"{name:44s} {us:8.2f} {ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
