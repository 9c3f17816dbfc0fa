"""Shared pytest helpers for the opkit package: which devices this machine has (tests that need
one skip, saying why, when it is absent) and fresh random inputs."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest

import opkit
import opkit.compiler


def _reason(call) -> str | None:
    try:
        call()
        return None
    except opkit.Error as error:
        return error.message.split(" (")[0]  # the first clause says it; the rest is detail


CUDA_MISSING = _reason(lambda: opkit.Device.cuda(0))
CPU_BACKEND_MISSING = _reason(opkit.Device.cpu)
# NVRTC compiles without a GPU (CI has the toolkit but no GPU).
CUDA_COMPILER_MISSING = _reason(lambda: opkit.compiler.compile("__global__ void k() {}", arch="sm_90"))


def kernel_devices() -> list:
    """Every device that can run SourceModule kernels here, as pytest params."""
    no_gpu = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no CUDA GPU: {CUDA_MISSING}")
    no_cpu = pytest.mark.skipif(CPU_BACKEND_MISSING is not None, reason=f"no CPU backend: {CPU_BACKEND_MISSING}")
    return [pytest.param("cuda", marks=no_gpu), pytest.param("cpu", marks=no_cpu)]


requires_gpu = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no CUDA GPU: {CUDA_MISSING}")


@pytest.fixture
def rng():
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"random seed {seed}")  # shown on failure, so a failing input can be reproduced
    return np.random.default_rng(seed)


def hashlib_digests(rows, double: bool = False) -> np.ndarray:
    """The reference: hashlib over each message, as an [N, 32] uint8 array."""
    out = []
    for row in rows:
        digest = hashlib.sha256(bytes(row)).digest()
        if double:
            digest = hashlib.sha256(digest).digest()
        out.append(digest)
    return np.frombuffer(b"".join(out), dtype=np.uint8).reshape(len(out), 32)


def captured_cuda_graph(step):
    """Runs `step` once on a side stream (compiles and loads its kernels, as torch.cuda.graphs
    asks before a capture), then captures one call of it; returns (graph, what the captured call
    returned). Imports torch, so only torch tests call it."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        result = step()
    return graph, result
