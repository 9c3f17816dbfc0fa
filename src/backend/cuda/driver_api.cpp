// Loads libcuda.so.1 once per process and fills the DriverApi table.
#include "backend/cuda/driver_api.hpp"

#include <mutex>

#include "backend/cuda/dynamic_library.hpp"

namespace opkit::cuda {
namespace {

struct LoadedDriver {
  DynamicLibrary library;
  DriverApi api{};
  bool ok = false;
  std::string reason;
};

template <class Fn>
bool bind(const DynamicLibrary& lib, Fn& slot, const char* name, std::string& missing) {
  slot = reinterpret_cast<Fn>(lib.symbol(name));
  if (slot == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
  return slot != nullptr;
}

LoadedDriver load_driver() {
  LoadedDriver d;
  std::string why;
  if (!d.library.open_first({"libcuda.so.1", "libcuda.so"}, why)) {
    d.reason = "the CUDA driver library libcuda.so.1 was not found (" + why +
               "); install the NVIDIA driver, or use the CPU backend";
    return d;
  }
  std::string missing;
  auto& a = d.api;
  const auto& l = d.library;
  bind(l, a.cuInit, "cuInit", missing);
  bind(l, a.cuDriverGetVersion, "cuDriverGetVersion", missing);
  bind(l, a.cuGetErrorName, "cuGetErrorName", missing);
  bind(l, a.cuGetErrorString, "cuGetErrorString", missing);
  bind(l, a.cuDeviceGetCount, "cuDeviceGetCount", missing);
  bind(l, a.cuDeviceGet, "cuDeviceGet", missing);
  bind(l, a.cuDeviceGetName, "cuDeviceGetName", missing);
  bind(l, a.cuDeviceGetAttribute, "cuDeviceGetAttribute", missing);
  bind(l, a.cuDeviceTotalMem, "cuDeviceTotalMem_v2", missing);
  bind(l, a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", missing);
  bind(l, a.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", missing);
  bind(l, a.cuCtxGetCurrent, "cuCtxGetCurrent", missing);
  bind(l, a.cuCtxSetCurrent, "cuCtxSetCurrent", missing);
  bind(l, a.cuCtxSynchronize, "cuCtxSynchronize", missing);
  bind(l, a.cuMemGetInfo, "cuMemGetInfo_v2", missing);
  bind(l, a.cuMemAlloc, "cuMemAlloc_v2", missing);
  bind(l, a.cuMemFree, "cuMemFree_v2", missing);
  bind(l, a.cuMemcpyHtoD, "cuMemcpyHtoD_v2", missing);
  bind(l, a.cuMemcpyDtoH, "cuMemcpyDtoH_v2", missing);
  bind(l, a.cuMemcpyDtoD, "cuMemcpyDtoD_v2", missing);
  bind(l, a.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", missing);
  bind(l, a.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", missing);
  bind(l, a.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", missing);
  bind(l, a.cuMemsetD8Async, "cuMemsetD8Async", missing);
  bind(l, a.cuMemsetD16Async, "cuMemsetD16Async", missing);
  bind(l, a.cuMemsetD32Async, "cuMemsetD32Async", missing);
  bind(l, a.cuModuleLoadData, "cuModuleLoadData", missing);
  bind(l, a.cuModuleUnload, "cuModuleUnload", missing);
  bind(l, a.cuModuleGetFunction, "cuModuleGetFunction", missing);
  bind(l, a.cuFuncGetAttribute, "cuFuncGetAttribute", missing);
  bind(l, a.cuFuncSetAttribute, "cuFuncSetAttribute", missing);
  bind(l, a.cuLaunchKernel, "cuLaunchKernel", missing);
  bind(l, a.cuStreamCreate, "cuStreamCreate", missing);
  bind(l, a.cuStreamDestroy, "cuStreamDestroy_v2", missing);
  bind(l, a.cuStreamSynchronize, "cuStreamSynchronize", missing);
  bind(l, a.cuEventCreate, "cuEventCreate", missing);
  bind(l, a.cuEventDestroy, "cuEventDestroy_v2", missing);
  bind(l, a.cuEventRecord, "cuEventRecord", missing);
  bind(l, a.cuEventSynchronize, "cuEventSynchronize", missing);
  // cuEventElapsedTime_v2 exists from CUDA 12.8; older drivers only have the original.
  a.cuEventElapsedTime = reinterpret_cast<decltype(a.cuEventElapsedTime)>(l.symbol("cuEventElapsedTime_v2"));
  if (a.cuEventElapsedTime == nullptr) bind(l, a.cuEventElapsedTime, "cuEventElapsedTime", missing);
  a.cuFuncGetParamInfo = reinterpret_cast<decltype(a.cuFuncGetParamInfo)>(l.symbol("cuFuncGetParamInfo"));
  if (!missing.empty()) {
    d.reason = d.library.path + " is too old: it lacks " + missing + "; update the NVIDIA driver";
    return d;
  }
  CUresult rc = a.cuInit(0);
  if (rc != CUDA_SUCCESS) {
    const char* name = nullptr;
    a.cuGetErrorName(rc, &name);
    d.reason = std::string("cuInit failed with ") + (name != nullptr ? name : std::to_string(rc)) +
               (rc == 100 ? " (no CUDA-capable GPU is visible to this process)" : "");
    return d;
  }
  d.ok = true;
  return d;
}

// Never destroyed: threads still compiling or launching while the process exits must not see a
// destroyed table.
const LoadedDriver& loaded() {
  static const auto* driver = new LoadedDriver(load_driver());
  return *driver;
}

}  // namespace

const DriverApi* driver_api(std::string* reason) {
  const auto& d = loaded();
  if (!d.ok && reason != nullptr) *reason = d.reason;
  return d.ok ? &d.api : nullptr;
}

std::string driver_library_path() {
  return loaded().library.path;
}

std::string cu_error_name(CUresult code) {
  const char* name = nullptr;
  const auto* api = driver_api();
  if (api != nullptr && api->cuGetErrorName(code, &name) == CUDA_SUCCESS && name != nullptr) return name;
  return "CUresult " + std::to_string(code);
}

std::string cu_error_string(CUresult code) {
  const char* text = nullptr;
  const auto* api = driver_api();
  if (api != nullptr && api->cuGetErrorString(code, &text) == CUDA_SUCCESS && text != nullptr) return text;
  return "unknown CUDA error";
}

}  // namespace opkit::cuda
