// The public opkit::nvrtc functions, over the dlopen-loaded NVRTC.
#include "nvrtc_api.hpp"
#include "nvrtc_compiler.hpp"
#include "opkit/error.hpp"
#include "opkit/nvrtc.hpp"

namespace opkit::nvrtc {

Info info() {
  Info out;
  out.available = cuda::nvrtc_api(&out.reason) != nullptr;
  if (out.available) {
    const auto& loaded = cuda::nvrtc_info();
    out.path = loaded.path;
    out.major = loaded.major;
    out.minor = loaded.minor;
    out.archs = loaded.archs;
  }
  return out;
}

CompiledProgram compile(const Program& program, std::string_view arch) {
  int sm = cuda::parse_sm(std::string(arch));
  if (sm == 0)
    throw Error(Errc::invalid_argument, "nvrtc::compile",
                "'" + std::string(arch) + "' is not a CUDA arch; write it as sm_90, compute_90 or 90");
  return cuda::nvrtc_compile(program.spec(), sm, arch.starts_with("compute_"));
}

}  // namespace opkit::nvrtc
