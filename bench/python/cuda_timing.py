"""Timing helpers the torch benchmarks share: one call between CUDA events, back-to-back calls on
the host clock, and the GPU time torch.profiler sees (CUPTI sees opkit's driver-API launches like
torch's own)."""

from __future__ import annotations

import sys
import time

import torch


def require_cuda() -> bool:
    """True when torch sees a CUDA device; otherwise says so on stderr."""
    if torch.cuda.is_available():
        return True
    print("no CUDA device visible to PyTorch", file=sys.stderr)
    return False


def event_ms(fn, runs: int) -> list[float]:
    """Milliseconds of each of `runs` single calls, between CUDA events on the current stream."""
    times = []
    for _ in range(runs):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return times


def loop_ms(fn, runs: int) -> float:
    """Wall milliseconds per call over `runs` back-to-back calls (what a stream of calls costs)."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(runs):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / runs * 1e3


def profiled_ms(fn, runs: int, keep) -> tuple[float, list[str]]:
    """Mean GPU milliseconds per call of the device activities `keep(event)` accepts, over `runs`
    calls, and their names with their count per call (nan when none was kept)."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            fn()
        torch.cuda.synchronize()
    total_us, names = 0.0, []
    for event in prof.key_averages():
        if event.device_type != DeviceType.CUDA or not keep(event):
            continue
        total_us += getattr(event, "device_time_total", None) or getattr(event, "cuda_time_total", 0.0)
        names.append(f"{event.key[:40]} x{event.count / runs:g}")
    return (total_us / runs / 1e3 if total_us else float("nan")), names
