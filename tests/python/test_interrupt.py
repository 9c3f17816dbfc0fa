"""Ctrl-C while opkit waits for a kernel raises KeyboardInterrupt promptly (issue 16 #5).

Each case runs a child Python that launches a kernel which never ends and is sent SIGINT. On the
CPU backend the launch itself is the wait: the kernel is stopped (its worker threads leave it),
so its counter stops moving and the next launch runs. On a GPU the launch returns at once and the
copy after it waits; the wait ends, while the kernel runs on until the process exits.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time

import pytest

from conftest import kernel_devices

CHILD = r"""
import os, sys, time
import numpy as np
import opkit

device = opkit.get_device(sys.argv[1])
mod = opkit.SourceModule('''
__global__ void spin(unsigned long long* progress) { for (;;) atomicAdd(progress, 1ull); }
__global__ void ones(int* out) { out[threadIdx.x] = 1; }
''', device=device)
progress = opkit.mem_alloc(8, device=device)
opkit.memset_d8(progress, 0, 8)
host = np.zeros(1, np.uint64)
print("launching", flush=True)
try:
    mod.get_function("spin")(progress, block=(32, 1, 1), grid=(64, 1))
    opkit.memcpy_dtoh(host, progress)  # on a GPU the launch returns at once: this copy waits
    print("the endless kernel returned", flush=True)
    sys.exit(1)
except KeyboardInterrupt:
    print("interrupted", flush=True)
if device.is_gpu:
    os._exit(0)  # the kernel still runs on the GPU; the process exit ends it
opkit.memcpy_dtoh(host, progress)
first = int(host[0])
time.sleep(0.3)
opkit.memcpy_dtoh(host, progress)
print("stopped" if first > 0 and int(host[0]) == first else f"still running: {first} -> {int(host[0])}", flush=True)
out = np.zeros(32, np.int32)
mod.get_function("ones")(opkit.Out(out), block=(32, 1, 1))
print("usable" if out.tolist() == [1] * 32 else f"next launch wrong: {out.tolist()}", flush=True)
"""


def read_line(child: subprocess.Popen, timeout: float) -> str:
    """The child's next stdout line, or "" when none comes within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([child.stdout], [], [], left)[0]:
            return ""
        chunk = os.read(child.stdout.fileno(), 1)
        if not chunk:
            break
        line += chunk
    return line.decode().strip()


@pytest.mark.parametrize("device", kernel_devices())
def test_ctrl_c_during_an_endless_kernel_raises_keyboard_interrupt(device):
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, device], stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
    )
    try:
        assert read_line(child, 300) == "launching", child.stderr.read().decode() if child.poll() is not None else ""
        time.sleep(1.0)  # well inside the launch (CPU) or the copy's wait (GPU)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        line = read_line(child, 10)
        waited = time.monotonic() - sent
        assert line == "interrupted", f"no KeyboardInterrupt within 10 s of SIGINT (got {line!r})"
        assert waited < 3.0, f"KeyboardInterrupt came {waited:.2f} s after SIGINT"
        if device == "cpu":
            assert read_line(child, 30) == "stopped"
            assert read_line(child, 60) == "usable"
        assert child.wait(timeout=30) == 0, child.stderr.read().decode()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


COMPILING_CHILD = r"""
import sys, uuid
import opkit

device = opkit.get_device("cpu")
source = "// %s\n__global__ void spin(unsigned long long* p) { for (;;) atomicAdd(p, 1ull); }\n" % uuid.uuid4()
print("compiling", flush=True)
try:
    mod = opkit.SourceModule(source, device=device)
    progress = opkit.mem_alloc(8, device=device)
    mod.get_function("spin")(progress, block=(1, 1, 1))  # the compile was quicker than the signal
except KeyboardInterrupt:
    print("interrupted", flush=True)
except opkit.Error as error:
    print("opkit.Error: " + str(error).splitlines()[0], flush=True)
"""


@pytest.mark.parametrize("device", [p for p in kernel_devices() if p.values == ("cpu",)])
def test_ctrl_c_at_a_terminal_during_a_cpu_compile_raises_keyboard_interrupt(device):
    # A terminal sends SIGINT to the whole process group: the host compiler dies too, and its
    # failure used to surface as opkit.CompileError instead of the KeyboardInterrupt.
    child = subprocess.Popen(
        [sys.executable, "-c", COMPILING_CHILD],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
        start_new_session=True,
        env={**os.environ, "OPKIT_CACHE": "0"},
    )
    try:
        assert read_line(child, 120) == "compiling"
        time.sleep(0.2)  # inside the compile (it takes a few hundred ms at least)
        os.killpg(child.pid, signal.SIGINT)
        assert read_line(child, 30) == "interrupted"
        assert child.wait(timeout=30) == 0, child.stderr.read().decode()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
