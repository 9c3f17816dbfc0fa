"""SHA-256 of 10^7 rows of 32 bytes held in a CUDA torch tensor: opkit.sha256 on the GPU (tensor in,
tensor out, no host round trip) against the tutorial's workaround (copy to the host, hashlib per
row, copy the digests back), and opkit's host path (OpenSSL on all cores) in the same workaround
shape. Checks that all give the same digests and prints the times and the speed-up.

    python bench/python/bench_sha256_torch.py [--rows 10000000] [--runs 10] [--json FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
import warnings

import numpy as np
import torch

import opkit
from cuda_timing import require_cuda


def timed(fn):
    torch.cuda.synchronize()
    start = time.perf_counter()
    result = fn()
    torch.cuda.synchronize()
    return result, time.perf_counter() - start


def hashlib_rows(host: np.ndarray) -> np.ndarray:
    digests = b"".join([hashlib.sha256(row).digest() for row in host])
    return np.frombuffer(digests, dtype=np.uint8).reshape(len(host), 32)


def to_cuda(host: np.ndarray) -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # read-only NumPy buffer: torch only reads it
        return torch.from_numpy(host).cuda()


def workaround(x: torch.Tensor, hash_rows) -> tuple[torch.Tensor, dict]:
    """The tutorial's shape: x.cpu(), hash on the host, .cuda(); each step timed."""
    host, t_down = timed(lambda: x.cpu().numpy())
    digests, t_hash = timed(lambda: hash_rows(host))
    out, t_up = timed(lambda: to_cuda(digests))
    return out, {"to_host_s": t_down, "hash_s": t_hash, "to_device_s": t_up, "total_s": t_down + t_hash + t_up}


def steps(t: dict, hash_name: str) -> str:
    return (f"{t['total_s']:.3f} s (to host {t['to_host_s']:.3f}, {hash_name} {t['hash_s']:.3f}, "
            f"back {t['to_device_s']:.3f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--length", type=int, default=32)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()

    if not require_cuda():
        return 2
    gen = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randint(0, 256, (args.rows, args.length), dtype=torch.uint8, device="cuda", generator=gen)
    gpu_name = torch.cuda.get_device_name(x.device)
    print(f"{args.rows} rows x {args.length} bytes in a CUDA tensor on {gpu_name}; "
          f"torch {torch.__version__}, opkit {opkit.__version__}")

    # opkit: first call compiles (or loads from the kernel cache), then steady-state runs.
    first, t_first = timed(lambda: opkit.sha256(x))
    times = []
    for _ in range(args.runs):
        del first
        first, t = timed(lambda: opkit.sha256(x))
        times.append(t)
    t_opkit = statistics.median(times)
    print(f"opkit.sha256, tensor -> tensor on the GPU: median {t_opkit * 1e3:.2f} ms over {args.runs} runs "
          f"({args.rows / t_opkit / 1e9:.3f} G rows/s, {args.rows * args.length / t_opkit / 1e9:.1f} GB/s); "
          f"first call {t_first * 1e3:.1f} ms")

    ours_host, t_ours_host = workaround(x, lambda h: opkit.sha256(h, device="cpu"))
    print(f"opkit host path (x.cpu(), opkit.sha256(device='cpu'), .cuda()): {steps(t_ours_host, 'hash')}")

    theirs, t_theirs = workaround(x, hashlib_rows)
    print(f"tutorial workaround (x.cpu(), hashlib per row, .cuda()): {steps(t_theirs, 'hashlib')}")

    equal = bool(torch.equal(first, theirs)) and bool(torch.equal(ours_host, theirs))
    ratio = t_theirs["total_s"] / t_opkit
    print(f"digests equal: {'yes' if equal else 'NO'}")
    print(f"speed-up of opkit.sha256 over the workaround: {ratio:.0f}x "
          f"(opkit's host path: {t_theirs['total_s'] / t_ours_host['total_s']:.1f}x)")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({
                "gpu": gpu_name, "rows": args.rows, "length": args.length, "torch": torch.__version__,
                "opkit_gpu_median_s": t_opkit, "opkit_gpu_runs_s": times, "opkit_first_call_s": t_first,
                "opkit_host_path": t_ours_host, "workaround": t_theirs, "digests_equal": equal, "speedup": ratio,
            }, f, indent=2)
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())
