// Loads NVRTC once per process: $OPKIT_NVRTC if set (and only it), else the known sonames, else
// the toolkit's lib64 folder under $CUDA_HOME, $CUDA_PATH or the default install prefix.
#include "nvrtc_api.hpp"

#include <cstdlib>

#include "dynamic_library.hpp"

namespace opkit::cuda {
namespace {

struct LoadedNvrtc {
  DynamicLibrary library;
  NvrtcApi api{};
  NvrtcInfo info;
  bool ok = false;
  std::string reason;
};

std::vector<std::string> candidate_names() {
  if (const char* explicit_path = std::getenv("OPKIT_NVRTC"); explicit_path != nullptr && *explicit_path)
    return {explicit_path};
  std::vector<std::string> names = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"};
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(var); root != nullptr && *root)
      for (const char* so : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
        names.push_back(std::string(root) + "/lib64/" + so);
  for (const char* so : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
    names.push_back(std::string("/usr/local/cuda/lib64/") + so);
  return names;
}

LoadedNvrtc load_nvrtc() {
  LoadedNvrtc n;
  std::string why;
  const bool explicit_choice = std::getenv("OPKIT_NVRTC") != nullptr && *std::getenv("OPKIT_NVRTC");
  if (!n.library.open_first(candidate_names(), why)) {
    n.reason = explicit_choice ? "OPKIT_NVRTC=" + std::string(std::getenv("OPKIT_NVRTC")) + " cannot be loaded (" +
                                     why + "); unset it or point it at libnvrtc.so"
                               : "NVRTC (libnvrtc.so.13/.12/.11.2) was not found (" + why +
                                     "); install the CUDA toolkit's NVRTC (Debian/Ubuntu: libnvrtc, or "
                                     "pip install nvidia-cuda-nvrtc) or set OPKIT_NVRTC to its path";
    return n;
  }
  std::string missing;
  auto& a = n.api;
  const auto& l = n.library;
  l.bind(a.nvrtcGetErrorString, "nvrtcGetErrorString", missing);
  l.bind(a.nvrtcVersion, "nvrtcVersion", missing);
  l.bind(a.nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs", missing);
  l.bind(a.nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs", missing);
  l.bind(a.nvrtcCreateProgram, "nvrtcCreateProgram", missing);
  l.bind(a.nvrtcDestroyProgram, "nvrtcDestroyProgram", missing);
  l.bind(a.nvrtcCompileProgram, "nvrtcCompileProgram", missing);
  l.bind(a.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", missing);
  l.bind(a.nvrtcGetProgramLog, "nvrtcGetProgramLog", missing);
  l.bind(a.nvrtcGetPTXSize, "nvrtcGetPTXSize", missing);
  l.bind(a.nvrtcGetPTX, "nvrtcGetPTX", missing);
  l.bind(a.nvrtcGetCUBINSize, "nvrtcGetCUBINSize", missing);
  l.bind(a.nvrtcGetCUBIN, "nvrtcGetCUBIN", missing);
  l.bind(a.nvrtcAddNameExpression, "nvrtcAddNameExpression", missing);
  l.bind(a.nvrtcGetLoweredName, "nvrtcGetLoweredName", missing);
  if (!missing.empty()) {
    n.reason = n.library.path + " is not a usable NVRTC (it lacks " + missing + "); NVRTC 11.2 or newer is needed" +
               (explicit_choice ? ": check OPKIT_NVRTC" : "");
    return n;
  }
  n.info.path = n.library.path;
  a.nvrtcVersion(&n.info.major, &n.info.minor);
  int count = 0;
  if (a.nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
    n.info.archs.resize(static_cast<std::size_t>(count));
    a.nvrtcGetSupportedArchs(n.info.archs.data());
  }
  n.ok = true;
  return n;
}

// Never destroyed: a compile still running on another thread while the process exits (background
// kernel compiles) must not see the supported-arch list freed under it.
const LoadedNvrtc& loaded() {
  static const auto* nvrtc = new LoadedNvrtc(load_nvrtc());
  return *nvrtc;
}

}  // namespace

const NvrtcApi* nvrtc_api(std::string* reason) {
  const auto& n = loaded();
  if (!n.ok && reason != nullptr) *reason = n.reason;
  return n.ok ? &n.api : nullptr;
}

const NvrtcInfo& nvrtc_info() {
  return loaded().info;
}

}  // namespace opkit::cuda
