// Program and CompiledProgram: the first two stages of the pipeline
//   Program (source + options) -> CompiledProgram (binary + log) -> Module -> Kernel -> launch.
// A CompiledProgram is plain data: it is what the kernel cache stores and what a backend loads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace opkit {

// Everything that determines a compiled binary, apart from the target (arch, compiler).
struct ProgramSpec {
  std::string source;
  std::string name = "kernel.cu";                            // shown in compile logs: name(LINE): error ...
  std::vector<std::pair<std::string, std::string>> defines;  // -DNAME=VALUE ("" value: -DNAME)
  std::vector<std::string> options;                          // passed to the compiler verbatim
  std::vector<std::string> include_dirs;
  std::vector<std::pair<std::string, std::string>> headers;  // in-memory headers: name, content
  std::vector<std::string> name_expressions;                 // extra kernels to resolve, e.g. "f<int>"
};

// Builder for a ProgramSpec. Kernels may be written PyCUDA-style (plain `__global__ void f`,
// C++ linkage): their names are found in the source and resolved after compilation.
class Program {
 public:
  explicit Program(std::string source) { spec_.source = std::move(source); }

  Program& name(std::string file_name) {
    spec_.name = std::move(file_name);
    return *this;
  }
  Program& define(std::string macro) {
    spec_.defines.emplace_back(std::move(macro), std::string{});
    return *this;
  }
  Program& define(std::string macro, std::string value) {
    spec_.defines.emplace_back(std::move(macro), std::move(value));
    return *this;
  }
  Program& define(std::string macro, const char* value) { return define(std::move(macro), std::string(value)); }
  template <class Integer>
  requires std::is_integral_v<Integer> Program& define(std::string macro, Integer value) {
    std::string text = std::to_string(value);
    if constexpr (std::is_unsigned_v<Integer>) text += "u";
    if constexpr (sizeof(Integer) == 8) text += "ll";
    return define(std::move(macro), std::move(text));
  }
  Program& option(std::string opt) {
    spec_.options.push_back(std::move(opt));
    return *this;
  }
  Program& include_dir(std::string dir) {
    spec_.include_dirs.push_back(std::move(dir));
    return *this;
  }
  Program& header(std::string header_name, std::string content) {
    spec_.headers.emplace_back(std::move(header_name), std::move(content));
    return *this;
  }
  Program& name_expression(std::string expr) {
    spec_.name_expressions.push_back(std::move(expr));
    return *this;
  }

  const ProgramSpec& spec() const noexcept { return spec_; }

 private:
  ProgramSpec spec_;
};

// A binary's format is named by the backend that makes it and checked by the one that loads it;
// these are the built-in backends' names.
struct BinaryFormat {
  static constexpr const char* cubin = "cubin";        // CUDA machine code for one sm_XX
  static constexpr const char* ptx = "ptx";            // CUDA virtual ISA, JIT-compiled by the driver (fallback only)
  static constexpr const char* host_dso = "host-dso";  // a shared object built by the CPU backend's host compiler
};
// How messages name a format: "cubin", "PTX", "host shared object"; another backend's as it is.
std::string binary_format_name(std::string_view format);

// The output of a compiler: a binary that one backend can load, plus what the compiler said.
struct CompiledProgram {
  std::string format = BinaryFormat::cubin;  // which backend can load it (BinaryFormat)
  std::string target;                        // "sm_90", "compute_90", "x86_64-g++-12.2"
  std::string source_name;                   // ProgramSpec::name, for error messages
  std::vector<std::uint8_t> binary;
  std::string log;                                   // compiler warnings (empty when silent)
  std::map<std::string, std::string> lowered_names;  // kernel name as written -> symbol

  // Byte-exact serialization for the on-disk cache; deserialize returns false on any damage.
  std::vector<std::uint8_t> serialize() const;
  static bool deserialize(const std::vector<std::uint8_t>& bytes, CompiledProgram& out);
};

// The names of the __global__ functions a source defines (comments and templates skipped),
// used to resolve PyCUDA-style kernels with C++ linkage.
std::vector<std::string> find_kernel_names(const std::string& source);

}  // namespace opkit
