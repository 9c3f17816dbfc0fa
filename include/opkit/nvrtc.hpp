// Direct access to NVRTC, with no GPU needed: ahead-of-time compilation for a named arch
// (`opkit compile`, CI) and what `opkit doctor` reports about the library.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "opkit/program.hpp"

namespace opkit::nvrtc {

struct Info {
  bool available = false;
  std::string reason;  // why not, when unavailable
  std::string path;    // the loaded library
  int major = 0, minor = 0;
  std::vector<int> archs;  // sm numbers NVRTC can emit cubins for
};

Info info();

// Compiles for `arch` ("sm_90", "90", "compute_90"): "compute_XX" asks for PTX; otherwise a cubin
// where NVRTC knows the arch, else PTX for the newest arch below it.
// Throws Error(Errc::unavailable) without NVRTC, Error(Errc::compile) with the log on errors.
CompiledProgram compile(const Program& program, std::string_view arch);

}  // namespace opkit::nvrtc
