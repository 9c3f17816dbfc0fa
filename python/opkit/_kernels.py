"""PyCUDA-style kernels: SourceModule(source).get_function(name)(*args, block=..., grid=...).

Arguments, as PyCUDA takes them and where opkit differs:
- NumPy scalars (numpy.int32(5), numpy.float32(2.0), numpy.uint64(x), structured numpy.void)
  pass by value with their exact C type.
- A Python int passes as a 32-bit int (range-checked). PyCUDA rejects Python ints; opkit accepts
  them because `int n` is the common case and the core checks each argument's size against the
  kernel's parameter list, so an int given for a 64-bit parameter is an error, not garbage.
- A Python float is rejected (float or double? say numpy.float32(x) or numpy.float64(x)), as in
  PyCUDA; so is a bool (say numpy.bool_(x) or numpy.int32(x)).
- Device memory passes as its address: a DeviceAllocation, any CUDA DLPack array (PyTorch, CuPy,
  JAX; zero-copy, after the producer's pending work on its current stream), or an object with
  __cuda_array_interface__.
- In(a), Out(a), InOut(a) copy a host array for the call. A bare host array (NumPy or any CPU
  DLPack array) counts as InOut on a GPU and passes directly on the CPU backend. PyCUDA instead
  passes a bare NumPy array by value, as a struct, which is rarely what anyone means.
"""

from __future__ import annotations

import os
import struct
import sys

import numpy as np

from . import _opkit
from ._arrays import (
    DL_CUDA,
    as_stream,
    borrowed_stream,
    capsule,
    dlpack_device,
    framework_of,
    framework_stream,
    is_c_contiguous,
    is_dlpack,
    on_cuda,
    on_host,
    stream_handle,
    torch_cuda_tensor,
    torch_current_stream,
)
from ._devices import get_device
from ._memory import InOut, _HostTransfer
from ._opkit import DeviceAllocation

_INT32 = (-(2**31), 2**31 - 1)
# Frameworks whose current CUDA stream a launch without stream= follows (framework_stream).
_STREAM_FRAMEWORKS = ("torch", "cupy")


_DIM3_SEEN: dict = {}  # launch shapes already checked, e.g. (256, 1) -> (256, 1, 1)


def _dim3(value, what: str) -> tuple[int, int, int]:
    try:
        return _DIM3_SEEN[value]  # a launch loop passes the same shape every time
    except (KeyError, TypeError):  # new, or unhashable (a list): checked below
        pass
    dims3 = _checked_dim3(value, what)
    if type(value) in (int, tuple) and len(_DIM3_SEEN) < 4096:
        _DIM3_SEEN[value] = dims3
    return dims3


def _checked_dim3(value, what: str) -> tuple[int, int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        dims = (value,)
    else:
        try:
            dims = tuple(int(v) for v in value)
        except (TypeError, ValueError):
            raise TypeError(f"{what} must be an int or a tuple of 1 to 3 ints, got {value!r}") from None
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise ValueError(f"{what} must have 1 to 3 positive dimensions, got {value!r}")
    return dims + (1,) * (3 - len(dims))


def _shared(shared) -> int:
    if shared < 0:
        raise ValueError(f"shared must not be negative, got {shared}")
    return int(shared)


_INT32_STRUCT, _POINTER_STRUCT = struct.Struct("=i"), struct.Struct("=Q")


def _launch_stream(device, stream, args=()):
    """stream= of a launch: the one given, else the innermost `with stream:` of this device on this
    thread, else the current stream of the framework (PyTorch, CuPy) whose CUDA array on this
    device is the first array argument, else None (the legacy default stream, as in PyCUDA)."""
    if stream is not None:
        return as_stream(device, stream)
    entered = _opkit._entered_stream(device)
    if entered is not None or not device.is_gpu:
        return entered
    for arg in args:
        tensor = torch_cuda_tensor(arg)
        if tensor is not None:
            index = tensor.get_device()
            if index != device.ordinal:
                return None  # device_pointer says which device the tensor is on
            handle = torch_current_stream(index)
            return borrowed_stream(device, handle) if handle else None
        if is_dlpack(arg) and framework_of(arg) in _STREAM_FRAMEWORKS:
            if not on_cuda(arg) or dlpack_device(arg)[1] != device.ordinal:
                return None  # a host array or one on another device: device_pointer says which
            handle = framework_stream(arg)
            return borrowed_stream(device, handle) if handle else None
    return None


def _pointer(address: int) -> bytes:
    return _POINTER_STRUCT.pack(address)


class _Call:
    """The packed arguments of one launch and the host transfers it owns."""

    def __init__(self, device, stream):
        self.device = device
        self.stream = stream
        self.transfers: list[_HostTransfer] = []

    def device_pointer(self, arg, index: int) -> bytes:
        if isinstance(arg, DeviceAllocation):
            if arg.device != self.device:
                raise ValueError(
                    f"argument #{index}: the allocation lives on {arg.device!r}, the kernel on {self.device!r}"
                )
            return _pointer(arg.ptr)
        tensor = torch_cuda_tensor(arg)
        if tensor is not None and self.on_torch_stream(tensor):
            return _pointer(self.torch_address(tensor, index))
        if is_dlpack(arg):
            device_type, device_id = dlpack_device(arg)
            if on_host(arg):
                if self.device.is_gpu:
                    return self.transfer(InOut(arg))
                return _pointer(self.checked_address(arg, None, index))
            if not self.device.is_gpu or device_id != self.device.ordinal:
                raise ValueError(
                    f"argument #{index}: the array lives on cuda:{device_id} (DLPack device type {device_type}), "
                    f"the kernel on {self.device!r}"
                )
            return _pointer(self.checked_address(arg, stream_handle(self.stream), index))
        interface = getattr(arg, "__cuda_array_interface__", None)
        if interface is not None:
            return _pointer(int(interface["data"][0]))
        return b""

    def on_torch_stream(self, tensor) -> bool:
        """Whether this launch runs on torch's current stream of the tensor's device: then the
        DLPack exchange, whose job is to order torch's pending work before the launch's stream,
        has nothing to do, and the tensor's address is read directly."""
        return stream_handle(self.stream) == torch_current_stream(tensor.get_device())

    def torch_address(self, tensor, index: int) -> int:
        """A CUDA tensor's address, with the checks checked_address makes of a DLPack array."""
        device_id = tensor.get_device()
        if not self.device.is_gpu or device_id != self.device.ordinal:
            raise ValueError(
                f"argument #{index}: the array lives on cuda:{device_id} (DLPack device type {DL_CUDA}), "
                f"the kernel on {self.device!r}"
            )
        if not tensor.is_contiguous() and tensor.numel() != 0:
            raise ValueError(
                f"argument #{index}: the array is not C-contiguous; pass a contiguous copy "
                f"(x.contiguous(), cupy.ascontiguousarray(x)) or its address explicitly"
            )
        return tensor.data_ptr()

    def checked_address(self, arg, stream: int | None, index: int) -> int:
        address, _, _, shape, strides, _ = _opkit.array_info(capsule(arg, stream))
        if not is_c_contiguous(shape, strides):
            raise ValueError(
                f"argument #{index}: the array is not C-contiguous; pass a contiguous copy "
                f"(x.contiguous(), cupy.ascontiguousarray(x)) or its address explicitly"
            )
        return address

    def transfer(self, transfer: _HostTransfer) -> bytes:
        address = transfer.prepare(self.device, self.stream)
        self.transfers.append(transfer)
        return _pointer(address)

    def pack(self, arg, index: int) -> bytes:
        if isinstance(arg, np.generic):
            return arg.tobytes()
        if isinstance(arg, _HostTransfer):
            return self.transfer(arg)
        if isinstance(arg, bool):
            raise TypeError(f"argument #{index}: a Python bool is ambiguous; pass numpy.bool_(x) or numpy.int32(x)")
        if isinstance(arg, int):
            if not _INT32[0] <= arg <= _INT32[1]:
                raise OverflowError(
                    f"argument #{index}: {arg} does not fit the 32-bit int a Python int passes as; "
                    f"say numpy.int64(x) or numpy.uint32(x)"
                )
            return struct.pack("=i", arg)
        if isinstance(arg, float):
            raise TypeError(
                f"argument #{index}: a Python float is ambiguous; pass numpy.float32(x) or numpy.float64(x)"
            )
        packed = self.device_pointer(arg, index)
        if packed:
            return packed
        raise TypeError(
            f"invalid type on parameter #{index} (0-based): {type(arg).__name__} (pass numpy scalars, "
            f"device memory, arrays, or In/Out/InOut)"
        )

    def finish(self) -> None:
        """Copies Out/InOut arrays back after the launch and frees their device copies."""
        if not self.transfers:
            return
        for transfer in self.transfers:
            transfer.finish(self.device, self.stream)
        (self.stream or self.device.default_stream()).synchronize()
        self.release()

    def release(self) -> None:
        for transfer in self.transfers:
            transfer.release()
        self.transfers.clear()


class Function:
    """One __global__ function of a SourceModule, called PyCUDA-style."""

    def __init__(self, kernel: _opkit.Kernel):
        self._kernel = kernel
        self._arg_types: str | None = None
        # Read once: each property read builds a wrapper, which a small launch notices.
        self._device = kernel.device
        self._gpu_ordinal = self._device.ordinal if self._device.is_gpu else None

    @property
    def name(self) -> str:
        return self._kernel.name

    @property
    def device(self):
        return self._kernel.device

    @property
    def attributes(self) -> dict:
        """max_threads_per_block, registers, static_shared_bytes, local_bytes."""
        return self._kernel.attributes

    @property
    def num_regs(self) -> int:
        return self._kernel.attributes["registers"]

    @property
    def max_threads_per_block(self) -> int:
        return self._kernel.attributes["max_threads_per_block"]

    def __call__(self, *args, block=None, grid=(1, 1), stream=None, shared=0, time_kernel=False):
        """Launches the kernel. block=(x, y, z) is required; grid defaults to (1, 1); shared is the
        dynamic shared memory in bytes; stream is an opkit/torch/CuPy stream or a CUstream handle
        (default: the `with stream:` stream, else the current stream of the framework of the first
        PyTorch or CuPy CUDA array argument, else the legacy default stream).
        With time_kernel=True, waits and returns the kernel's time in seconds."""
        if block is None:
            raise ValueError("block=(x, y, z) is required")
        if time_kernel:
            return self._general_launch(args, grid, block, shared, stream, time_kernel=True)
        self._call(args, grid, block, shared, stream)
        return None

    def _call(self, args: tuple, grid, block, shared, stream) -> None:
        """An untimed launch (RawKernel's calls come here directly): torch tensors and scalars on
        torch's current stream through the one-pass launch, anything else through _Call."""
        if stream is None and self._gpu_ordinal is not None and self._launch_on_torch(args, grid, block, shared):
            return
        self._general_launch(args, grid, block, shared, stream, time_kernel=False)

    def _general_launch(self, args: tuple, grid, block, shared, stream, time_kernel: bool):
        device = self._device
        call = _Call(device, _launch_stream(device, stream, args))
        try:
            packed = [call.pack(arg, i) for i, arg in enumerate(args)]
            return self._launch(call, packed, grid, block, shared, time_kernel)
        finally:
            call.release()

    def _launch_on_torch(self, args: tuple, grid, block, shared) -> bool:
        """The common launch of a CUDA kernel on PyTorch tensors (every argument a contiguous CUDA
        tensor on this GPU, a NumPy scalar or a 32-bit Python int, at least one tensor, no stream
        given or entered) on torch's current stream, packed and launched in one pass by
        Kernel.launch_tensors: what _launch_stream and _Call.pack would choose, read directly.
        False, having launched nothing, for anything else (the general path, with its checks and
        error messages)."""
        torch = sys.modules.get("torch")
        if torch is None or _opkit._entered_stream(self._device) is not None:
            return False
        ordinal = self._gpu_ordinal
        return self._kernel.launch_tensors(
            args if type(args) is tuple else tuple(args),
            ordinal,
            torch.Tensor,
            np.generic,
            _dim3(grid, "grid"),
            _dim3(block, "block"),
            _shared(shared),
            torch_current_stream(ordinal),
            True,
        )

    def _launch(self, call: _Call, packed, grid, block, shared, time_kernel):
        grid3, block3 = _dim3(grid, "grid"), _dim3(block, "block")
        if not time_kernel:
            self._kernel.launch(packed, grid3, block3, _shared(shared), call.stream)
            call.finish()
            return None
        stream = call.stream or call.device.default_stream()
        start, stop = call.device.create_event(), call.device.create_event()
        start.record(stream)
        self._kernel.launch(packed, grid3, block3, _shared(shared), call.stream)
        stop.record(stream)
        call.finish()
        stop.synchronize()
        return _opkit.Event.elapsed_ms(start, stop) * 1e-3

    # ---- PyCUDA's prepared calls: argument types fixed once, in struct-module characters. ----

    def prepare(self, arg_types) -> "Function":
        """Fixes the argument types: a string of struct characters ("P" pointer, "i" int,
        "f" float, "d" double, "Q" uint64, ...) or a sequence of those or of NumPy dtypes."""
        if isinstance(arg_types, str):
            codes = list(arg_types)
        else:
            codes = [t if t == "P" else np.dtype(t).char for t in arg_types]
        for code in codes:
            if code != "P":
                try:
                    struct.calcsize("=" + code)
                except struct.error:
                    raise ValueError(f"prepare: unknown argument type {code!r}") from None
        self._arg_types = "".join(codes)
        return self

    def _pack_prepared(self, call: _Call, args) -> list[bytes]:
        if self._arg_types is None:
            raise RuntimeError(f"{self.name}: call prepare(arg_types) before prepared_call")
        if len(args) != len(self._arg_types):
            raise TypeError(f"{self.name}: prepared for {len(self._arg_types)} argument(s), got {len(args)}")
        packed = []
        for index, (code, arg) in enumerate(zip(self._arg_types, args)):
            if code == "P":
                if isinstance(arg, int) and not isinstance(arg, bool):
                    packed.append(_pointer(arg))
                else:
                    pointer = call.device_pointer(arg, index)
                    if not pointer:
                        raise TypeError(f"argument #{index}: expected device memory for 'P', got {type(arg).__name__}")
                    packed.append(pointer)
            else:
                try:
                    packed.append(struct.pack("=" + code, arg))
                except struct.error as error:
                    raise TypeError(f"argument #{index} ({code!r}): {error}") from None
        return packed

    def prepared_call(self, grid, block, *args, shared_size=0):
        self._prepared(grid, block, None, args, shared_size, time_kernel=False)

    def prepared_async_call(self, grid, block, stream, *args, shared_size=0):
        self._prepared(grid, block, stream, args, shared_size, time_kernel=False)

    def prepared_timed_call(self, grid, block, *args, shared_size=0):
        """Launches, waits, and returns a function giving the kernel's time in seconds (PyCUDA's shape)."""
        seconds = self._prepared(grid, block, None, args, shared_size, time_kernel=True)
        return lambda: seconds

    def _prepared(self, grid, block, stream, args, shared_size, time_kernel):
        device = self._kernel.device
        call = _Call(device, _launch_stream(device, stream, args))
        try:
            return self._launch(call, self._pack_prepared(call, args), grid, block, shared_size, time_kernel)
        finally:
            call.release()

    def __repr__(self) -> str:
        return f"<opkit.Function {self.name} on {self.device!r}>"


class Module:
    """A loaded module: its kernels (get_function) and module-scope variables (get_global).
    SourceModule compiles one from source; module_from_file loads a prebuilt cubin or PTX."""

    _module: _opkit.Module

    def get_function(self, name: str) -> Function:
        """The kernel with this source name ("doublify", "f<int>") or symbol. Raises opkit.Error
        (kind "not_found") listing the kernels the module has."""
        return Function(self._module.kernel(name))

    def get_global(self, name: str) -> tuple[int, int]:
        """(device address, size in bytes) of the __device__ or __constant__ variable `name`, as
        PyCUDA returns it: copy to it with memcpy_htod(address, array). A variable at global scope
        is known by its name; one in a namespace by its mangled symbol. Raises opkit.Error (kind
        "not_found") when the module has no such variable."""
        return self._module.global_(name)

    @property
    def kernel_names(self) -> list[str]:
        return self._module.kernel_names

    @property
    def device(self):
        return self._module.device

    @property
    def target(self) -> str:
        """What the binary is for: "sm_90", "compute_90" (PTX), a host target."""
        return self._module.target


def module_from_file(path, device=None) -> Module:
    """Loads a prebuilt binary: a cubin or PTX file (from `opkit compile -o`, nvcc -cubin or
    -ptx), PyCUDA's driver.module_from_file. Its kernels are named by their symbols: extern "C"
    names as written, C++ kernels by their mangled names (kernel_names lists a cubin's). Raises
    opkit.Error: kind "not_found" for a missing file, "load" for a file the device cannot load."""
    module = Module.__new__(Module)
    module._module = _opkit.load_file(get_device(device), os.fspath(path))
    return module


def module_from_buffer(data, device=None) -> Module:
    """Loads a prebuilt cubin or PTX from memory (bytes, as opkit.compiler.compile returns),
    PyCUDA's driver.module_from_buffer. Kernels are named as module_from_file names them."""
    if isinstance(data, str):
        data = data.encode()
    module = Module.__new__(Module)
    module._module = _opkit.load_binary(get_device(device), bytes(data), "<buffer>")
    return module


class SourceModule(Module):
    """CUDA C++ source compiled at run time for one device (NVRTC on a GPU, the host compiler on
    the CPU backend), through opkit's kernel cache.

    options: compiler options, passed verbatim (NVRTC's, e.g. "--use_fast_math", "-lineinfo").
    include_dirs: directories for #include "...".
    no_extern_c: accepted for PyCUDA compatibility. opkit never wraps the source in extern "C";
        get_function finds plain C++ __global__ functions by their source name either way.
    device: where to compile and run (default: opkit.default_device()).
    defines: {"NAME": value} as -DNAME=value (None: -DNAME).
    headers: {"name.h": "source text"} available to #include.
    name_expressions: template instantiations to make callable, e.g. ["scale<float>"].
    Compile errors raise opkit.CompileError, whose message and .log carry the compiler's log.
    """

    def __init__(
        self,
        source: str,
        *,
        options=None,
        include_dirs=(),
        no_extern_c: bool = False,
        device=None,
        name: str = "kernel.cu",
        defines=None,
        headers=None,
        name_expressions=(),
    ):
        if not isinstance(source, str):
            raise TypeError(f"source must be a str, got {type(source).__name__}")
        if isinstance(options, str):
            raise TypeError("options must be a list of strings, e.g. ['--use_fast_math']")
        device = get_device(device)
        self.no_extern_c = bool(no_extern_c)
        define_pairs = [(str(k), "" if v is None else str(v)) for k, v in (defines or {}).items()]
        header_pairs = [(str(k), str(v)) for k, v in (headers or {}).items()]
        self._module = _opkit.compile(
            device,
            source,
            name,
            [str(o) for o in (options or [])],
            [str(d) for d in include_dirs],
            define_pairs,
            header_pairs,
            [str(e) for e in name_expressions],
        )

    @property
    def log(self) -> str:
        """The compiler's warnings (empty when it said nothing)."""
        return self._module.log


def _option_tuple(options) -> tuple:
    """CuPy's options=: a tuple of compiler options, or one option as a str."""
    return (options,) if isinstance(options, str) else tuple(options)


class _RawCall:
    """CuPy's call shape over one compiled kernel: kernel(grid, block, args, shared_mem=0,
    stream=None), with grid and block as tuples (or ints) and args a tuple of the kernel's
    arguments (device arrays, DLPack arrays, NumPy scalars, In/Out/InOut host arrays)."""

    def __init__(self, name: str, function: Function):
        self.name = name
        self._function = function

    def __call__(self, grid, block, args, *, shared_mem: int = 0, stream=None):
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"args must be a tuple of the kernel's arguments, got {type(args).__name__}")
        self._function._call(args, grid, block, shared_mem, stream)

    @property
    def attributes(self) -> dict:
        return self._function.attributes

    @property
    def num_regs(self) -> int:
        return self._function.num_regs

    @property
    def max_threads_per_block(self) -> int:
        return self._function.max_threads_per_block

    def __repr__(self) -> str:
        return f"<opkit.{type(self).__name__.lstrip('_')} {self.name!r} on {self._function.device}>"


class RawKernel(_RawCall):
    """CuPy's RawKernel(code, name, options=()): one kernel of `code`, called as
    kernel(grid, block, args, shared_mem=0, stream=None). The source compiles at construction
    (CuPy compiles at the first call), so a compile error or an unknown name is raised here. Other
    keywords (device, defines, headers, name_expressions, include_dirs) are SourceModule's."""

    def __init__(self, code: str, name: str, options=(), **module_options):
        self.code, self.options = code, _option_tuple(options)
        super().__init__(name, SourceModule(code, options=list(self.options), **module_options).get_function(name))


class RawModule:
    """CuPy's module shape: RawModule(code=source, options=(), name_expressions=()) or
    RawModule(path=cubin_or_ptx_file), then get_function(name), called as RawKernel is, and
    get_global(name). Other keywords are SourceModule's (with path=: only device=)."""

    def __init__(self, *, code: str | None = None, path=None, options=(), name_expressions=(), **module_options):
        if (code is None) == (path is None):
            raise TypeError("RawModule needs exactly one of code= (CUDA C++ source) and path= (a cubin or PTX file)")
        self.code, self.options = code, _option_tuple(options)
        if path is not None:
            if self.options or name_expressions or set(module_options) - {"device"}:
                raise TypeError("RawModule(path=...) loads a built binary: options, name_expressions and compile "
                                "settings apply to code= only")
            self._module = module_from_file(path, module_options.get("device"))
            return
        self._module = SourceModule(
            code, options=list(self.options), name_expressions=list(name_expressions), **module_options
        )

    def get_global(self, name: str) -> tuple[int, int]:
        """(device address, size in bytes) of a __device__ or __constant__ variable (CuPy returns a
        MemoryPointer; opkit gives the address and size, as PyCUDA does)."""
        return self._module.get_global(name)

    def get_function(self, name: str) -> _RawCall:
        """The kernel with this source name ("scale", "f<int>" among name_expressions), called as
        RawKernel is: kernel(grid, block, args, shared_mem=0, stream=None)."""
        return _RawCall(name, self._module.get_function(name))

    @property
    def kernel_names(self) -> list[str]:
        return self._module.kernel_names
