// CUDA C++ -> cubin (or PTX) with NVRTC. Needs no GPU: the target is given as an sm number, so
// `opkit compile` and the CI tests work on machines without one.
#pragma once

#include <string>

#include "opkit/program.hpp"

namespace opkit::cuda {

// Compiles for sm_<sm> as a cubin when NVRTC knows that arch; otherwise as PTX for the newest
// arch NVRTC knows below it (the driver JIT-compiles it). `ptx` asks for PTX (compute_<sm>) even
// where a cubin is possible (`opkit compile -o X.ptx`). Throws Error(compile) with the log.
CompiledProgram nvrtc_compile(const ProgramSpec& spec, int sm, bool ptx = false);

// One small compile, once per process. NVRTC creates static objects during its first compile, and
// exit destroys static objects in the reverse order of their creation: a compile still running at
// exit (one on the compile queue, whose destructor waits for it) finds them destroyed when they
// were created after the queue, and hangs or aborts ("LLVM ERROR: out of memory"; a SEGV in
// nvrtcCompileProgram on the GPU machine). Warmed up before the queue exists, they outlive it.
void nvrtc_warm_up() noexcept;

// NVRTC version + the resolved target: the part of the cache key that is not the spec.
std::string nvrtc_identity(int sm, bool ptx = false);

}  // namespace opkit::cuda
