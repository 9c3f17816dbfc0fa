// Source -> Module -> Kernel, and the untyped launch that SourceModule's functions use: the
// Python layer packs each argument into bytes (numpy scalars by value, arrays as addresses) and
// the core checks the count and sizes against the kernel's parameter list where it knows it.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

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

// The per-launch path of every Python launch (SourceModule functions, RawKernel, kernel ops), so it
// makes no heap allocation for up to 32 arguments and takes the stream by pointer (no copy).
void launch(const Kernel& kernel, const nb::list& args, Triple grid, Triple block, std::uint32_t shared_bytes,
            const Stream* stream) {
  constexpr std::size_t inline_count = 32;
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
  LaunchConfig config;
  config.grid = Dim3(std::get<0>(grid), std::get<1>(grid), std::get<2>(grid));
  config.block = Dim3(std::get<0>(block), std::get<1>(block), std::get<2>(block));
  config.shared_bytes = shared_bytes;
  config.stream = stream;
  // The bytes objects stay alive: `args` holds them. A GPU launch only queues the kernel (the
  // driver blocks at most while its queue is full), so it needs no interrupt check, only the GIL
  // let go. A CPU-backend launch runs the whole grid here, so Ctrl-C must reach it (a `while (1)`
  // kernel is stopped).
  if (kernel.device().is_gpu()) {
    nb::gil_scoped_release unlocked;
    kernel.launch_packed(config, pointers, sizes, count);
    return;
  }
  interruptible([&] { kernel.launch_packed(config, pointers, sizes, count); });
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
      .def_prop_ro("name", &Kernel::name)
      .def_prop_ro("device", &Kernel::device)
      .def_prop_ro("attributes", &attributes);
}

}  // namespace opkit::python
