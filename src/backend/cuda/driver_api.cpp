// Loads libcuda.so.1 once per process and fills the DriverApi table.
#include "driver_api.hpp"

#include <mutex>

#include "dynamic_library.hpp"

namespace opkit::cuda {
namespace {

struct LoadedDriver {
  DynamicLibrary library;
  DriverApi api{};
  bool ok = false;
  std::string reason;
};

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
  l.bind(a.cuInit, "cuInit", missing);
  l.bind(a.cuDriverGetVersion, "cuDriverGetVersion", missing);
  l.bind(a.cuGetErrorName, "cuGetErrorName", missing);
  l.bind(a.cuGetErrorString, "cuGetErrorString", missing);
  l.bind(a.cuDeviceGetCount, "cuDeviceGetCount", missing);
  l.bind(a.cuDeviceGet, "cuDeviceGet", missing);
  l.bind(a.cuDeviceGetName, "cuDeviceGetName", missing);
  l.bind(a.cuDeviceGetAttribute, "cuDeviceGetAttribute", missing);
  l.bind(a.cuDeviceTotalMem, "cuDeviceTotalMem_v2", missing);
  l.bind(a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", missing);
  l.bind(a.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", missing);
  l.bind(a.cuCtxGetCurrent, "cuCtxGetCurrent", missing);
  l.bind(a.cuCtxSetCurrent, "cuCtxSetCurrent", missing);
  l.bind(a.cuCtxSynchronize, "cuCtxSynchronize", missing);
  l.bind(a.cuMemGetInfo, "cuMemGetInfo_v2", missing);
  l.bind(a.cuMemAlloc, "cuMemAlloc_v2", missing);
  l.bind(a.cuMemFree, "cuMemFree_v2", missing);
  l.bind(a.cuMemHostAlloc, "cuMemHostAlloc", missing);
  l.bind(a.cuMemFreeHost, "cuMemFreeHost", missing);
  l.bind(a.cuMemcpyHtoD, "cuMemcpyHtoD_v2", missing);
  l.bind(a.cuMemcpyDtoH, "cuMemcpyDtoH_v2", missing);
  l.bind(a.cuMemcpyDtoD, "cuMemcpyDtoD_v2", missing);
  l.bind(a.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", missing);
  l.bind(a.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", missing);
  l.bind(a.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", missing);
  l.bind(a.cuMemsetD8Async, "cuMemsetD8Async", missing);
  l.bind(a.cuMemsetD16Async, "cuMemsetD16Async", missing);
  l.bind(a.cuMemsetD32Async, "cuMemsetD32Async", missing);
  l.bind(a.cuModuleLoadData, "cuModuleLoadData", missing);
  l.bind(a.cuModuleUnload, "cuModuleUnload", missing);
  l.bind(a.cuModuleGetFunction, "cuModuleGetFunction", missing);
  l.bind(a.cuModuleGetGlobal, "cuModuleGetGlobal_v2", missing);
  l.bind(a.cuFuncGetAttribute, "cuFuncGetAttribute", missing);
  l.bind(a.cuFuncSetAttribute, "cuFuncSetAttribute", missing);
  l.bind(a.cuLaunchKernel, "cuLaunchKernel", missing);
  l.bind(a.cuStreamCreate, "cuStreamCreate", missing);
  l.bind(a.cuStreamDestroy, "cuStreamDestroy_v2", missing);
  l.bind(a.cuStreamSynchronize, "cuStreamSynchronize", missing);
  l.bind(a.cuStreamQuery, "cuStreamQuery", missing);
  l.bind(a.cuStreamWaitEvent, "cuStreamWaitEvent", missing);
  l.bind(a.cuEventCreate, "cuEventCreate", missing);
  l.bind(a.cuEventDestroy, "cuEventDestroy_v2", missing);
  l.bind(a.cuEventRecord, "cuEventRecord", missing);
  l.bind(a.cuEventSynchronize, "cuEventSynchronize", missing);
  l.bind(a.cuEventQuery, "cuEventQuery", missing);
  // cuEventElapsedTime_v2 exists from CUDA 12.8; older drivers only have the original.
  a.cuEventElapsedTime = reinterpret_cast<decltype(a.cuEventElapsedTime)>(l.symbol("cuEventElapsedTime_v2"));
  if (a.cuEventElapsedTime == nullptr) l.bind(a.cuEventElapsedTime, "cuEventElapsedTime", missing);
  a.cuFuncGetParamInfo = reinterpret_cast<decltype(a.cuFuncGetParamInfo)>(l.symbol("cuFuncGetParamInfo"));
  a.cuFuncGetParamCount = reinterpret_cast<decltype(a.cuFuncGetParamCount)>(l.symbol("cuFuncGetParamCount"));
  // All five or none: a pool is only used when every one of them is there.
  a.cuMemPoolCreate = reinterpret_cast<decltype(a.cuMemPoolCreate)>(l.symbol("cuMemPoolCreate"));
  a.cuMemPoolDestroy = reinterpret_cast<decltype(a.cuMemPoolDestroy)>(l.symbol("cuMemPoolDestroy"));
  a.cuMemPoolSetAttribute = reinterpret_cast<decltype(a.cuMemPoolSetAttribute)>(l.symbol("cuMemPoolSetAttribute"));
  a.cuMemAllocFromPoolAsync =
      reinterpret_cast<decltype(a.cuMemAllocFromPoolAsync)>(l.symbol("cuMemAllocFromPoolAsync"));
  a.cuMemFreeAsync = reinterpret_cast<decltype(a.cuMemFreeAsync)>(l.symbol("cuMemFreeAsync"));
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

std::string driver_version_name(int version) {
  return "CUDA driver " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace opkit::cuda
