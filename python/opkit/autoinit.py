"""`import opkit.autoinit` does what `import pycuda.autoinit` does: it picks the device (the first
CUDA GPU, else the CPU backend) now, so that a missing device fails at import. `device` is it."""

from ._devices import default_device

device = default_device()
