"""pycuda.compiler's SourceModule under opkit: `from opkit.compiler import SourceModule`."""

from ._kernels import SourceModule

__all__ = ["SourceModule"]
