// opkit::nvrtc::info(): what `opkit doctor` reports about the dlopen-loaded NVRTC.
#include "nvrtc_api.hpp"
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

}  // namespace opkit::nvrtc
