// Source -> Module -> Kernel, and the untyped launch that SourceModule's functions use: the
// Python layer packs each argument into bytes (numpy scalars by value, arrays as addresses) and
// the core checks the count and sizes against the kernel's parameter list where it knows it.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "interruptible.hpp"
#include "opkit/error.hpp"
#include "opkit/kernel.hpp"
#include "opkit/module.hpp"
#include "opkit/program.hpp"
#include "opkit/target.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace opkit::python {
namespace {

using Triple = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;
using Pairs = std::vector<std::pair<std::string, std::string>>;

Program make_program(std::string source, std::string name, std::vector<std::string> options,
                     std::vector<std::string> include_dirs, const Pairs& defines, const Pairs& headers,
                     std::vector<std::string> name_expressions) {
  Program program(std::move(source));
  program.name(std::move(name));
  for (auto& option : options) program.option(std::move(option));
  for (auto& dir : include_dirs) program.include_dir(std::move(dir));
  for (const auto& [macro, value] : defines) program.define(macro, value);
  for (const auto& [header, content] : headers) program.header(header, content);
  for (auto& expression : name_expressions) program.name_expression(std::move(expression));
  return program;
}

Module compile(const Device& device, std::string source, std::string name, std::vector<std::string> options,
               std::vector<std::string> include_dirs, const Pairs& defines, const Pairs& headers,
               std::vector<std::string> name_expressions) {
  Program program = make_program(std::move(source), std::move(name), std::move(options), std::move(include_dirs),
                                 defines, headers, std::move(name_expressions));
  return interruptible([&] { return device.compile(program); });
}

// Ahead of time, with no device (NVRTC needs no GPU): (format, target, binary, log).
std::tuple<std::string, std::string, nb::bytes, std::string> build_binary(
    const std::string& backend, const std::string& arch, std::string source, std::string name,
    std::vector<std::string> options, std::vector<std::string> include_dirs, const Pairs& defines, const Pairs& headers,
    std::vector<std::string> name_expressions) {
  Program program = make_program(std::move(source), std::move(name), std::move(options), std::move(include_dirs),
                                 defines, headers, std::move(name_expressions));
  CompiledProgram built = interruptible([&] { return build(program, Target{backend, arch}).program; });
  return {built.format, built.target, nb::bytes(built.binary.data(), built.binary.size()), built.log};
}

std::vector<std::string> kernel_names(const Module& module) {
  std::vector<std::string> names;
  for (const auto& [name, symbol] : module.program().lowered_names) names.push_back(name);
  return names;
}

constexpr std::size_t inline_count = 32;  // arguments a launch packs without a heap allocation

void launch_pointers(const Kernel& kernel, void** pointers, const std::size_t* sizes, std::size_t count, Triple grid,
                     Triple block, std::uint32_t shared_bytes, const Stream* stream) {
  LaunchConfig config;
  config.grid = Dim3(std::get<0>(grid), std::get<1>(grid), std::get<2>(grid));
  config.block = Dim3(std::get<0>(block), std::get<1>(block), std::get<2>(block));
  config.shared_bytes = shared_bytes;
  config.stream = stream;
  // A GPU launch only queues the kernel (the driver blocks at most while its queue is full), so it
  // needs no interrupt check, only the GIL let go. A CPU-backend launch runs the whole grid here,
  // so Ctrl-C must reach it (a `while (1)` kernel is stopped).
  if (kernel.device().is_gpu()) {
    nb::gil_scoped_release unlocked;
    kernel.launch_packed(config, pointers, sizes, count);
    return;
  }
  interruptible([&] { kernel.launch_packed(config, pointers, sizes, count); });
}

// The per-launch path of every Python launch (SourceModule functions, RawKernel, kernel ops), so it
// makes no heap allocation for up to 32 arguments and takes the stream by pointer (no copy).
void launch(const Kernel& kernel, const nb::list& args, Triple grid, Triple block, std::uint32_t shared_bytes,
            const Stream* stream) {
  const std::size_t count = args.size();
  void* inline_pointers[inline_count];
  std::size_t inline_sizes[inline_count];
  std::vector<void*> more_pointers;
  std::vector<std::size_t> more_sizes;
  void** pointers = inline_pointers;
  std::size_t* sizes = inline_sizes;
  if (count > inline_count) {
    more_pointers.resize(count);
    more_sizes.resize(count);
    pointers = more_pointers.data();
    sizes = more_sizes.data();
  }
  for (std::size_t i = 0; i < count; ++i) {
    PyObject* arg = PyList_GET_ITEM(args.ptr(), static_cast<Py_ssize_t>(i));
    if (!PyBytes_Check(arg)) throw nb::type_error("launch: each packed argument must be a bytes object");
    pointers[i] = PyBytes_AS_STRING(arg);
    sizes[i] = static_cast<std::size_t>(PyBytes_GET_SIZE(arg));
  }
  // The bytes objects stay alive: `args` holds them.
  launch_pointers(kernel, pointers, sizes, count, grid, block, shared_bytes, stream);
}

// The method names launch_tensors calls, interned once.
struct TensorMethods {
  nb::object get_device = nb::steal(PyUnicode_InternFromString("get_device"));
  nb::object is_contiguous = nb::steal(PyUnicode_InternFromString("is_contiguous"));
  nb::object data_ptr = nb::steal(PyUnicode_InternFromString("data_ptr"));
  nb::object tobytes = nb::steal(PyUnicode_InternFromString("tobytes"));
};

// obj.method() for a method without arguments.
nb::object call(PyObject* obj, const nb::object& method) {
  PyObject* result = PyObject_CallMethodNoArgs(obj, method.ptr());
  if (result == nullptr) throw nb::python_error();
  return nb::steal(result);
}

// The stream a launch_tensors call names: None (the kernel's default stream), an opkit Stream, or
// the raw handle of a framework's stream (torch._C._cuda_getCurrentRawStream's int; 0, the legacy
// default stream, is the default stream too), wrapped for this launch only: a borrowed wrapper owns
// nothing and costs less than a cache lookup from Python would.
const Stream* launch_stream(const Kernel& kernel, nb::handle stream, std::optional<Stream>& borrowed) {
  if (stream.is_none()) return nullptr;
  if (PyLong_Check(stream.ptr()) != 0) {
    const auto handle = static_cast<std::uintptr_t>(PyLong_AsUnsignedLongLong(stream.ptr()));
    if (PyErr_Occurred() != nullptr) throw nb::python_error();
    if (handle == 0) return nullptr;
    borrowed.emplace(
        kernel.device().borrow_stream(reinterpret_cast<void*>(handle)));  // NOLINT(performance-no-int-to-ptr)
    return &*borrowed;
  }
  return nb::cast<const Stream*>(stream);
}

// The launch on torch tensors of kernel ops (opkit.torch.kernel_op) and of SourceModule functions
// and RawKernels called with tensors, packing in the same pass as it launches, from the Python
// objects themselves: a tensor of exactly `tensor_type` on the op's device (get_device() ==
// device_index; -1 is the CPU) and contiguous passes its data_ptr(), a Python int of 32 bits an
// int, an instance of `scalar_type` (numpy.generic) its tobytes(). These are what a Python packing
// loop gives, without the loop and the bytes objects, which cost a small op about as much as
// torch's dispatcher does. At any other argument (or a tensor of another device, or a strided one),
// or with no tensor at all when `needs_tensor` (the stream was chosen for a tensor), it launches
// nothing and returns false: the caller then packs with its general rules, whose errors say what
// is wrong.
bool launch_tensors(const Kernel& kernel, const nb::tuple& args, int device_index, nb::handle tensor_type,
                    nb::handle scalar_type, Triple grid, Triple block, std::uint32_t shared_bytes, nb::handle stream,
                    bool needs_tensor) {
  static const TensorMethods* methods = new TensorMethods();  // never freed: outlives every call
  const std::size_t count = args.size();
  if (count > inline_count) return false;
  std::uint64_t values[inline_count];
  void* pointers[inline_count];
  std::size_t sizes[inline_count];
  nb::object scalars[inline_count];  // each numpy scalar's bytes, alive until the launch returns
  bool saw_tensor = false;
  for (std::size_t i = 0; i < count; ++i) {
    PyObject* arg = PyTuple_GET_ITEM(args.ptr(), static_cast<Py_ssize_t>(i));
    if (Py_TYPE(arg) == reinterpret_cast<PyTypeObject*>(tensor_type.ptr())) {
      nb::object device = call(arg, methods->get_device);
      const long index = PyLong_AsLong(device.ptr());
      if (index == -1 && PyErr_Occurred() != nullptr) throw nb::python_error();
      if (index != device_index || call(arg, methods->is_contiguous).ptr() != Py_True) return false;
      nb::object address = call(arg, methods->data_ptr);
      values[i] = PyLong_AsUnsignedLongLong(address.ptr());
      if (PyErr_Occurred() != nullptr) throw nb::python_error();
      pointers[i] = &values[i];
      sizes[i] = sizeof(std::uint64_t);
      saw_tensor = true;
    } else if (PyLong_CheckExact(arg)) {  // not bool: ambiguous, refused by the general rules
      int overflow = 0;
      const long long value = PyLong_AsLongLongAndOverflow(arg, &overflow);
      if (overflow != 0 || value < INT32_MIN || value > INT32_MAX) return false;
      const auto narrow = static_cast<std::int32_t>(value);
      std::memcpy(&values[i], &narrow, sizeof narrow);
      pointers[i] = &values[i];
      sizes[i] = sizeof narrow;
    } else {
      const int is_scalar = PyObject_IsInstance(arg, scalar_type.ptr());
      if (is_scalar < 0) throw nb::python_error();
      if (is_scalar == 0) return false;
      scalars[i] = call(arg, methods->tobytes);
      if (!PyBytes_Check(scalars[i].ptr())) return false;
      pointers[i] = PyBytes_AS_STRING(scalars[i].ptr());
      sizes[i] = static_cast<std::size_t>(PyBytes_GET_SIZE(scalars[i].ptr()));
    }
  }
  if (needs_tensor && !saw_tensor) return false;
  std::optional<Stream> borrowed;
  launch_pointers(kernel, pointers, sizes, count, grid, block, shared_bytes, launch_stream(kernel, stream, borrowed));
  return true;
}

nb::dict attributes(const Kernel& kernel) {
  KernelAttributes a = kernel.attributes();
  nb::dict d;
  d["max_threads_per_block"] = a.max_threads_per_block;
  d["registers"] = a.registers;
  d["static_shared_bytes"] = a.static_shared_bytes;
  d["local_bytes"] = a.local_bytes;
  return d;
}

}  // namespace

void bind_program(nb::module_& m) {
  m.def("compile", &compile, "device"_a, "source"_a, "name"_a, "options"_a, "include_dirs"_a, "defines"_a, "headers"_a,
        "name_expressions"_a, "Compiles CUDA C++ source for the device (through the kernel cache) and loads it.");

  m.def("find_kernel_names", &find_kernel_names, "source"_a);
  m.def("build_binary", &build_binary, "backend"_a, "arch"_a, "source"_a, "name"_a, "options"_a, "include_dirs"_a,
        "defines"_a, "headers"_a, "name_expressions"_a,
        "Compiles for a backend and arch without a device, through the kernel cache: (format, target, binary, log).");
  m.def(
      "load_file", [](const Device& device, const std::string& path) { return device.load_file(path); }, "device"_a,
      "path"_a, "Loads a prebuilt binary file (a cubin or PTX) on the device.");
  m.def(
      "load_binary",
      [](const Device& device, nb::bytes data, const std::string& name) {
        const auto* begin = static_cast<const std::uint8_t*>(data.data());
        return device.load_binary(std::vector<std::uint8_t>(begin, begin + data.size()), name);
      },
      "device"_a, "data"_a, "name"_a, "Loads a prebuilt binary (a cubin or PTX) from memory on the device.");

  nb::class_<Module>(m, "Module")
      .def("kernel", &Module::kernel, "name"_a)
      .def_prop_ro("kernel_names", &kernel_names)
      .def_prop_ro("log", [](const Module& mod) { return mod.program().log; })
      .def_prop_ro("target", [](const Module& mod) { return mod.program().target; })
      .def_prop_ro("format", [](const Module& mod) { return std::string(binary_format_name(mod.program().format)); })
      .def_prop_ro("device", &Module::device)
      .def(
          "global_",
          [](const Module& mod, std::string_view symbol) {
            GlobalVariable found = mod.global(symbol);
            return std::make_pair(reinterpret_cast<std::uintptr_t>(found.address), found.bytes);
          },
          "symbol"_a, "(device address, size in bytes) of a __device__ or __constant__ variable.");

  nb::class_<Kernel>(m, "Kernel")
      .def("launch", &launch, "args"_a, "grid"_a, "block"_a, "shared_bytes"_a, "stream"_a.none() = nb::none())
      .def("launch_tensors", &launch_tensors, "args"_a, "device_index"_a, "tensor_type"_a, "scalar_type"_a, "grid"_a,
           "block"_a, "shared_bytes"_a, "stream"_a.none() = nb::none(), "needs_tensor"_a = false,
           "Packs and launches in one pass: exact tensor_type tensors of device_index (-1: CPU), contiguous, as "
           "their data_ptr(); 32-bit Python ints; scalar_type instances as tobytes(). stream: None, a Stream or "
           "a raw stream handle (int). False, launching nothing, at any other argument, or with no tensor when "
           "needs_tensor.")
      .def_prop_ro("name", &Kernel::name)
      .def_prop_ro("device", &Kernel::device)
      .def_prop_ro("attributes", &attributes);
}

}  // namespace opkit::python
