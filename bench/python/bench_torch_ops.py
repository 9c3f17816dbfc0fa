"""opkit's torch ops on a CUDA GPU: throughput of torch.ops.opkit.sha256 against the kernel alone,
and the per-call cost of small batches, eager and inside a CUDA graph.

Throughput: [rows, length] uint8 CUDA tensors; each way is timed between CUDA events (median of
--runs), and the kernel's own time comes from torch.profiler over the same calls (what the GPU
spent in sha256_fixed*). Ways: the registered op (output from torch's allocator), its out= form
(preallocated output), opkit.sha256 (the plain Python call, which for a contiguous tensor also
writes into torch.empty). Per call: back-to-back calls of one op on a
tiny input, host wall time per call (the GPU keeps up): eager (the median of --rounds rounds of
--calls calls, the cases interleaved so that a busy moment of the host hits them all alike),
through torch.compile(fullgraph=True), and captured 100 at a time in one CUDA graph and replayed;
CuPy's RawKernel and torch elementwise ops of the same size are the yardstick, and the closing lines
give each opkit way as a multiple of CuPy's launch (issue 19: a kernel op at most 1.2x).

    python bench/python/bench_torch_ops.py [--runs 20] [--calls 5000] [--rounds 5] [--per-call-only] [--json FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time

import numpy as np
import torch

import opkit
import opkit.torch as ot
from cuda_timing import event_ms, loop_ms, profiled_ms, require_cuda


def kernel_ms(fn, runs: int) -> float:
    """Mean GPU time per call of fn spent in the sha256 kernels. Kernels only: the op
    "opkit::sha256_out" itself, where recorded, holds its kernels' time too."""
    return profiled_ms(fn, runs, lambda e: "sha256" in e.key and not e.key.startswith("opkit::") and e.count >= runs)[0]


def check(digests: torch.Tensor, x: torch.Tensor) -> bool:
    sample = torch.randint(0, x.shape[0], (256,), device=x.device)
    rows, got = x[sample].cpu().numpy(), digests[sample].cpu().numpy()
    return all(hashlib.sha256(bytes(r)).digest() == bytes(g) for r, g in zip(rows, got))


def throughput(rows: int, length: int, runs: int) -> dict:
    x = torch.randint(0, 256, (rows, length), dtype=torch.uint8, device="cuda")
    out = torch.empty((rows, 32), dtype=torch.uint8, device="cuda")
    ways = {
        "torch.ops.opkit.sha256": lambda: torch.ops.opkit.sha256(x),
        "torch.ops.opkit.sha256_out": lambda: torch.ops.opkit.sha256_out(x, out),
        "opkit.sha256 (Python call)": lambda: opkit.sha256(x),
    }
    ok = check(torch.ops.opkit.sha256(x), x) and check(opkit.sha256(x), x)
    torch.ops.opkit.sha256_out(x, out)
    ok = ok and check(out, x)
    result = {"rows": rows, "length": length, "digests_ok": ok}
    for name, fn in ways.items():
        fn()
        result[name] = statistics.median(event_ms(fn, runs))
    result["kernel"] = kernel_ms(ways["torch.ops.opkit.sha256_out"], runs)
    return result


def per_call_us(fn, calls: int) -> float:
    """Host wall time per call over `calls` back-to-back calls (the GPU work is tiny)."""
    for _ in range(20):
        fn()
    return loop_ms(fn, calls) * 1e3


def eager_per_call_us(cases: dict, calls: int, rounds: int) -> dict:
    """Each case's median per-call time over `rounds` rounds, each round timing every case in turn."""
    samples: dict = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            samples[name].append(per_call_us(fn, calls))
    return {name: statistics.median(times) for name, times in samples.items()}


def compiled_per_call_us(fn, calls: int) -> float:
    try:
        compiled = torch.compile(fn, fullgraph=True)
        compiled()
    except Exception as error:  # reported, and the rest of the table still printed
        print(f"torch.compile failed: {type(error).__name__}: {str(error)[:300]}", file=sys.stderr)
        return float("nan")
    return per_call_us(compiled, calls)


def graph_per_call_us(fn, calls: int, replays: int) -> float:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(replays):
        graph.replay()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / (replays * calls) * 1e6


DOUBLIFY = """
__global__ void doublify(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] *= 2; }
"""
TWICE = """
__global__ void twice(float *y, const float *a, int n)
{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2 * a[i]; }
"""
CUPY = "cupy.RawKernel doublify [64] (yardstick)"
KERNEL_OP = "kernel_op doublify [64] (in place)"


def overheads(calls: int, rounds: int) -> dict:
    x = torch.randint(0, 256, (64, 64), dtype=torch.uint8, device="cuda")
    out = torch.empty((64, 32), dtype=torch.uint8, device="cuda")
    f = torch.ones(64, device="cuda")
    doublify = ot.kernel_op(
        "opkit_bench::doublify", DOUBLIFY, kernel="doublify", schema="(Tensor(a!) a) -> ()",
        args=lambda a: (a, a.numel()), grid=1, block=64,
    )
    # An op with an output has an autograd kernel (a gradient through it is an error naming it).
    twice = ot.kernel_op(
        "opkit_bench::twice", TWICE, kernel="twice", outputs=lambda a: torch.empty_like(a),
        args=lambda y, a: (y, a, a.numel()), grid=1, block=64,
    )
    # The floor under any op whose implementation is Python: one registered the same way that
    # does nothing (torch's dispatcher into Python and back); and what an autograd kernel
    # registered with torch.library.register_autograd adds to an op that returns a new tensor
    # (kernel ops used to have one; theirs now costs next to nothing when no input requires grad).
    floor = torch.library.Library("opkit_bench", "FRAGMENT")
    floor.define("noop(Tensor(a!) a) -> ()")
    floor.impl("noop", lambda a: None, "CUDA")
    torch.library.register_fake("opkit_bench::noop", lambda a: None, lib=floor)
    for op in ("new_output", "new_output_autograd"):
        floor.define(f"{op}(Tensor a) -> Tensor")
        floor.impl(op, torch.empty_like, "CUDA")
        torch.library.register_fake(f"opkit_bench::{op}", torch.empty_like, lib=floor)
    torch.library.register_autograd("opkit_bench::new_output_autograd", lambda ctx, grad: None,
                                    setup_context=lambda ctx, inputs, output: None, lib=floor)
    raw = opkit.RawKernel(DOUBLIFY, "doublify", device="cuda")
    n64 = np.int32(64)
    cases = {
        "torch.ops.opkit.sha256 [64,64]": lambda: torch.ops.opkit.sha256(x),
        "torch.ops.opkit.sha256_out [64,64]": lambda: torch.ops.opkit.sha256_out(x, out),
        "opkit.sha256 (Python call) [64,64]": lambda: opkit.sha256(x),
        KERNEL_OP: lambda: doublify(f),
        "torch.ops.opkit_bench.doublify [64]": lambda: torch.ops.opkit_bench.doublify(f),
        "kernel_op twice [64] (new output)": lambda: twice(f),
        "opkit.RawKernel doublify [64] (torch tensor)": lambda: raw((1,), (64,), (f, n64)),
        "Python op that does nothing (floor)": lambda: torch.ops.opkit_bench.noop(f),
        "Python op: empty_like (floor, output)": lambda: torch.ops.opkit_bench.new_output(f),
        "... + register_autograd kernel": lambda: torch.ops.opkit_bench.new_output_autograd(f),
        "torch f.mul_(1) [64] (yardstick)": lambda: f.mul_(1),
        "torch x + 1 [64,64] (yardstick)": lambda: x + 1,
    }
    try:
        import cupy

        # CuPy looks kernels up by their symbol, so its copy needs C linkage (opkit's RawKernel
        # takes PyCUDA-style sources as they are).
        cupy_kernel = cupy.RawKernel('extern "C" ' + DOUBLIFY.strip(), "doublify")
        g = cupy.ones(64, dtype=cupy.float32)
        cases[CUPY] = lambda: cupy_kernel((1,), (64,), (g, n64))
    except ImportError as error:
        print(f"no CuPy yardstick: {error}", file=sys.stderr)
    eager = eager_per_call_us(cases, calls, rounds)
    result = {}
    for name, fn in cases.items():
        # opkit.sha256 is a plain Python call: dynamo breaks the graph there, so it has no
        # compiled or CUDA-graph column.
        registered = not any(word in name for word in ("Python call", "RawKernel"))
        result[name] = {
            "eager_us": eager[name],
            "compiled_us": compiled_per_call_us(fn, calls) if registered else float("nan"),
            "graph_us": graph_per_call_us(fn, 100, max(1, calls // 100)) if registered else float("nan"),
        }
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5, help="eager per-call rounds (their median)")
    parser.add_argument("--per-call-only", action="store_true", help="skip the throughput table")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    if not require_cuda():
        return 2
    print(f"{torch.cuda.get_device_name()}; torch {torch.__version__}, opkit {opkit.__version__}")
    sizes = [] if args.per_call_only else [(1 << 20, 64), (1 << 24, 64), (1 << 26, 32)]
    rates = [throughput(rows, length, args.runs) for rows, length in sizes]
    if rates:
        print(f"\n{'throughput (GH/s; % of kernel-only)':40s} " + " ".join(f"{f'{r}x{l} B':>16s}" for r, l in sizes))
        for way in ("kernel", "torch.ops.opkit.sha256", "torch.ops.opkit.sha256_out", "opkit.sha256 (Python call)"):
            cells = []
            for r in rates:
                rate = r["rows"] / (r[way] * 1e-3) / 1e9
                cells.append(f"{rate:7.2f} ({r['kernel'] / r[way]:4.0%})")
            print(f"{way:40s} " + " ".join(f"{c:>16s}" for c in cells))
        checked = " ".join(f"{'ok' if r['digests_ok'] else 'WRONG':>16s}" for r in rates)
        print(f"{'digests checked against hashlib':40s} {checked}")
    sys.stdout.flush()  # the throughput table stands even if a per-call case fails
    calls = overheads(args.calls, args.rounds)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "throughput_ms": rates, "per_call_us": calls}, f, indent=2)
    print(f"\n{'per call (us)':46s} {'eager':>10s} {'compiled':>10s} {'CUDA graph':>10s}")
    for name, t in calls.items():
        print(f"{name:46s} {t['eager_us']:10.2f} {t['compiled_us']:10.2f} {t['graph_us']:10.2f}")
    if CUPY in calls:
        cupy_us = calls[CUPY]["eager_us"]
        print(f"\neager, as a multiple of CuPy's launch ({cupy_us:.2f} us; issue 19's goal for a kernel op: <= 1.20x)")
        for name, t in calls.items():
            if name.startswith(("kernel_op", "torch.ops.opkit", "opkit.RawKernel")):
                print(f"{name:46s} {t['eager_us'] / cupy_us:9.2f}x")
    return 0 if all(r["digests_ok"] for r in rates) else 1


if __name__ == "__main__":
    sys.exit(main())
