# Issue 5 diagnosis: which step of tests/python/test_gpu_torch.py::test_non_contiguous_tensor_is_refused
# crashes the process on the GPU machine (the Python traceback of the crash names the line).
import ctypes, faulthandler, os, sys
import torch, opkit
# torch replaced the LD_PRELOADed crash handler; put it back, then faulthandler (which chains to it).
if os.environ.get("SEGV_BACKTRACE"):
    ctypes.CDLL(os.environ["SEGV_BACKTRACE"]).segv_backtrace_install()
faulthandler.enable()
def step(text):
    print("step:", text, flush=True)
step("compile")
mod = opkit.SourceModule("__global__ void k(float *a) { a[0] = 1; }", device="cuda")
x = torch.zeros((8, 8), device="cuda").t()
step("capsule of a transposed tensor")
from opkit._arrays import capsule
c = capsule(x, None)
step("array_info")
print(opkit._opkit.array_info(c), flush=True)
step("kernel call with a transposed tensor")
try:
    mod.get_function("k")(x, block=1)
except Exception as e:
    print("raised", type(e).__name__, e, flush=True)
step("sha256 of a transposed uint8 tensor")
try:
    opkit.sha256(torch.zeros((8, 8), dtype=torch.uint8, device="cuda").t())
except Exception as e:
    print("raised", type(e).__name__, e, flush=True)
step("done")
