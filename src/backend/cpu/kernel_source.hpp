// The text the CPU backend hands the host compiler: the first pass's input (shim + user source),
// the rewrite of the preprocessed result (CUDA's __global__ / __shared__ made host C++), and the
// generated entry points through which the host runs one CUDA thread of a kernel.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace opkit::cpu {

// File names inside the private compile directory.
inline constexpr const char* kShimHeader = "opkit_cpu_shim.h";
inline constexpr const char* kAbiHeader = "opkit_cpu_abi.h";

// `#include` of the shim, then the user's source, numbered as lines of `source_name`.
std::string first_pass_source(const std::string& source, const std::string& source_name);

struct RewrittenSource {
  std::string text;       // ready for the host compiler as preprocessed C++ (-x c++-cpp-output)
  std::string user_code;  // only the lines from non-system files: where kernels are looked for
  // Each __global__ function's name and the namespace it is declared in ("" at global scope,
  // "a::b" inside namespace a { namespace b {): find_kernel_names gives bare names.
  std::multimap<std::string, std::string> kernel_namespaces;
};

// Rewrites the preprocessed first-pass output: `__global__` is dropped, `__shared__` becomes
// `static thread_local` (one copy per OS thread, and an OS thread runs one block at a time), and
// `extern __shared__ T name[];` a pointer to the block's dynamic shared memory. Throws
// Error(Errc::compile) naming the user's file and line for a declaration it cannot rewrite.
RewrittenSource rewrite_preprocessed(std::string_view preprocessed, const std::string& source_name);

// Plain C++ (no macros) defining the module table the host looks up: one entry point per kernel
// expression ("k", "f<int>", "ns::g").
std::string entry_points(const std::vector<std::string>& kernel_expressions);

}  // namespace opkit::cpu
