"""nvCOMP's LZ4 on device-resident data, the peer of bench/lz4_bench.cpp, on the same files and
at the same chunk size (opkit's block size): one line per file in the bench's format
(ratio, compress and decompress GB/s, best and median of --runs, CUDA events around each call),
then whether the round trip matched. Needs cupy and the nvidia-nvcomp-cu13 wheels
(bench/device/lz4.sh installs those from .whl/).
    python3 bench/python/lz4_nvcomp.py [--chunk 65536] [--runs 5] FILE...
"""
import argparse
import os
import statistics
import sys

import cupy as cp
import numpy as np
from nvidia import nvcomp


def timed(fn, runs):
    result = fn()  # warm-up
    cp.cuda.Device().synchronize()
    seconds = []
    for _ in range(runs):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        result = fn()
        stop.record()
        stop.synchronize()
        seconds.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
    return result, min(seconds), statistics.median(seconds)


def codec(chunk):
    """nvCOMP's LZ4 at `chunk` bytes per chunk: nvCOMP 6 names the option uncomp_chunk_size (it
    rejects chunk_size), older releases chunk_size; default chunking where neither is taken."""
    for option in ("uncomp_chunk_size", "chunk_size"):
        try:
            return nvcomp.Codec(algorithm="LZ4", **{option: chunk}), f"chunk {chunk >> 10} KiB"
        except (TypeError, ValueError, RuntimeError) as error:  # an nvCOMP without the option
            print(f"nvCOMP rejects {option}={chunk} ({error})", file=sys.stderr)
    print("nvCOMP: default chunking", file=sys.stderr)
    return nvcomp.Codec(algorithm="LZ4"), "default chunks"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--chunk", type=int, default=65536)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"# nvcomp {nvcomp.__version__} on {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    lz4, label = codec(args.chunk)
    for path in args.files:
        try:
            data = np.fromfile(path, dtype=np.uint8)
            n = data.size
            gpu = cp.asarray(data)
            array = nvcomp.as_array(gpu)
            encoded, cbest, cmed = timed(lambda: lz4.encode(array), args.runs)
            decoded, dbest, dmed = timed(lambda: lz4.decode(encoded), args.runs)
            same = bool(cp.array_equal(cp.asarray(decoded).view(cp.uint8).ravel()[:n], gpu))
            name = f"{os.path.basename(path)} ({n >> 20} MiB)"
            engine = f"nvCOMP LZ4 {label}" if same else "nvCOMP LZ4 WRONG"
            print(f"{name:<28} {engine:<26} ratio {n / encoded.buffer_size:.3f}  compress {n / cbest / 1e9:7.2f} GB/s "
                  f"(median {n / cmed / 1e9:7.2f})  decompress {n / dbest / 1e9:7.2f} GB/s (median {n / dmed / 1e9:7.2f})",
                  flush=True)
        except Exception as error:  # one file's failure must not hide the others
            print(f"{path}: nvCOMP failed: {error}", flush=True)


if __name__ == "__main__":
    main()
