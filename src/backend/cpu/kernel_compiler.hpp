// ProgramSpec -> host shared object: the CPU backend's compiler. Two runs of the host compiler:
// preprocess (shim + user source + -D/-I), rewrite CUDA's __global__/__shared__ and append the
// kernel entry points, then compile the result with -O2 -shared -fPIC.
#pragma once

#include <string>

#include "host_compiler.hpp"
#include "opkit/program.hpp"

namespace opkit::cpu {

// Throws Error(Errc::compile) with the compiler's log (file names as the user knows them), the
// kernel source name and the command line when the source does not compile.
CompiledProgram compile_kernels(const ProgramSpec& spec, const HostCompiler& cxx);

// Everything besides the spec that changes the binary: compiler, its version, flags, shim.
std::string kernel_compiler_identity(const HostCompiler& cxx);

// "x86_64-g++-12.2.0": CompiledProgram::target of what compile_kernels produces.
std::string kernel_target(const HostCompiler& cxx);

// The machine name ("x86_64", "aarch64") that a loadable binary's target starts with.
std::string host_arch();

}  // namespace opkit::cpu
