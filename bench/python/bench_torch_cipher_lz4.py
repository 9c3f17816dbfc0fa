"""opkit's cipher and LZ4 torch ops on a CUDA GPU: throughput of each registered op on a CUDA
tensor against the GPU time its own kernels take.

For each op the call is timed between CUDA events (one call, median of --runs) and over --runs
back-to-back calls (perf_counter, synchronised at the end); the GPU time of the same calls comes
from torch.profiler (every device activity in the call: opkit's kernels, and copies of keys, tags
and frame headers). "loop % of GPU time" is that GPU time over the back-to-back wall time per
call: 100% means the op runs at its kernels' speed. Every result is checked: ciphertexts and tags against
the cryptography package (or libcrypto, tests/python/cipher_reference.py) on a sample, LZ4 by a
round trip through the op and, where the lz4 package is present, through liblz4.

    python bench/python/bench_torch_cipher_lz4.py [--mib 256] [--runs 10] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import numpy as np
import torch

import opkit
import opkit.torch  # noqa: F401  (registers torch.ops.opkit.*)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "python"))
import cipher_reference  # noqa: E402  (the tests' reference: cryptography, or libcrypto through ctypes)
from cuda_timing import event_ms, loop_ms, profiled_ms, require_cuda  # noqa: E402


def measure(op: str, nbytes: int, fn, runs: int, checked: bool, **extra) -> dict:
    """One table row: fn timed one call at a time (CUDA events), back to back, and by the GPU time
    of its device activities (kernels, copies, memsets; an op's own "opkit::..." record holds its
    kernels' time too, so it is left out)."""
    fn()
    wall, loop = statistics.median(event_ms(fn, runs)), loop_ms(fn, runs)
    gpu, names = profiled_ms(fn, runs, lambda e: not e.key.startswith("opkit::"))
    return {"op": op, "bytes": nbytes, "wall_ms": wall, "loop_ms": loop, "gpu_ms": gpu, "device_work": names,
            "checked": checked, **extra}


def sample_ok(cipher: str, x: torch.Tensor, ct: torch.Tensor, key: bytes, iv: bytes, tag=None) -> bool:
    """The first MiB and the whole tag against the reference (the tag covers every byte)."""
    head = min(x.numel(), 1 << 20)
    if tag is None:  # a stream cipher: a prefix of the ciphertext is the prefix's encryption
        want, _ = cipher_reference.reference(cipher, key, iv, bytes(x[:head].cpu().numpy()))
        return bytes(ct[:head].cpu().numpy()) == want
    want, want_tag = cipher_reference.reference(cipher, key, iv, bytes(x.cpu().numpy()))
    return bytes(ct[:head].cpu().numpy()) == want[:head] and bytes(tag.numpy()) == want_tag


def cipher_cases(x: torch.Tensor, runs: int) -> list[dict]:
    rows = []
    rng = np.random.default_rng()
    for cipher in ("aes-128-ctr", "aes-256-ctr", "chacha20", "aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"):
        key, iv = cipher_reference.fresh(rng, cipher)  # chacha20: a counter with no 32-bit wrap in the message
        kt = torch.tensor(list(key), dtype=torch.uint8)
        it = torch.tensor(list(iv), dtype=torch.uint8)
        empty = kt.new_empty((0,))
        out = torch.empty_like(x)
        if cipher_reference.is_aead(cipher):
            call = lambda c=cipher: torch.ops.opkit.aead_encrypt(x, c, kt, it, empty)  # noqa: E731
            ct, tag = call()
            ok = sample_ok(cipher, x, ct, key, iv, tag)
            ways = {"aead_encrypt": call,
                    "aead_decrypt": lambda c=cipher, ct=ct, tag=tag: torch.ops.opkit.aead_decrypt(ct, c, kt, it, empty, tag)}
            ok = ok and torch.equal(ways["aead_decrypt"](), x)
        else:
            ways = {"encrypt": lambda c=cipher: torch.ops.opkit.encrypt(x, c, kt, it),
                    "encrypt_out": lambda c=cipher: torch.ops.opkit.encrypt_out(x, c, kt, it, out)}
            ok = sample_ok(cipher, x, ways["encrypt"](), key, iv)
        rows += [measure(f"{cipher} {way}", x.numel(), fn, runs, ok) for way, fn in ways.items()]
    return rows


def compressible(nbytes: int) -> torch.Tensor:
    """Half 256-byte runs copied from a 32 KiB pool (matches within LZ4's 64 KiB window), half random."""
    gen = torch.Generator(device="cuda").manual_seed(7)
    pool = torch.randint(0, 256, (32 << 10,), dtype=torch.uint8, device="cuda", generator=gen)
    runs = nbytes // 256
    starts = torch.randint(0, (32 << 10) - 256, (runs,), device="cuda", generator=gen)
    copied = pool[starts[:, None] + torch.arange(256, device="cuda")]
    noise = torch.randint(0, 256, (runs, 256), dtype=torch.uint8, device="cuda", generator=gen)
    keep = torch.rand(runs, device="cuda", generator=gen) < 0.5
    return torch.where(keep[:, None], copied, noise).reshape(-1).contiguous()


def lz4_cases(nbytes: int, runs: int) -> list[dict]:
    rows = []
    x = compressible(nbytes)
    for block in (64 << 10, 4 << 20):
        frame = torch.ops.opkit.lz4_compress(x, block)
        back = torch.ops.opkit.lz4_decompress(frame)
        ok = torch.equal(back, x)
        try:
            import lz4.frame

            ok = ok and lz4.frame.decompress(bytes(frame.cpu().numpy())) == bytes(x.cpu().numpy())
        except ImportError:
            pass
        ways = {f"lz4_compress {block >> 10} KiB blocks": lambda b=block: torch.ops.opkit.lz4_compress(x, b),
                f"lz4_decompress {block >> 10} KiB blocks": lambda f=frame: torch.ops.opkit.lz4_decompress(f)}
        rows += [measure(way, nbytes, fn, runs, ok, ratio=nbytes / frame.numel()) for way, fn in ways.items()]
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    if not require_cuda():
        return 2
    print(f"{torch.cuda.get_device_name()}; torch {torch.__version__}, opkit {opkit.__version__}; "
          f"{args.mib} MiB per call, median of {args.runs}")
    nbytes = args.mib << 20
    x = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, device="cuda")
    rows = cipher_cases(x, args.runs) + lz4_cases(nbytes, args.runs)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "rows": rows}, f, indent=2)
    print(f"\n{'op (CUDA tensor in, CUDA tensor out)':44s} {'events GB/s':>11s} {'loop GB/s':>10s} "
          f"{'GPU-time GB/s':>14s} {'loop % of GPU time':>19s} {'checked':>8s}")
    for r in rows:
        rate = {k: r["bytes"] / r[k] / 1e6 for k in ("wall_ms", "loop_ms", "gpu_ms")}
        extra = f"  (ratio {r['ratio']:.2f})" if "ratio" in r else ""
        print(f"{r['op']:44s} {rate['wall_ms']:11.1f} {rate['loop_ms']:10.1f} {rate['gpu_ms']:14.1f} "
              f"{r['gpu_ms'] / r['loop_ms']:19.0%} {'ok' if r['checked'] else 'WRONG':>8s}{extra}")
    print("\ndevice work per call:")
    for r in rows:
        print(f"  {r['op']}: {', '.join(r['device_work'])}")
    return 0 if all(r["checked"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
