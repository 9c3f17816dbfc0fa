// The subset of NVRTC opkit uses, declared here and loaded with dlopen at run time from
// $OPKIT_NVRTC, else libnvrtc.so.13, .12, .11.2, or the unversioned name.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace opkit::cuda {

using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
inline constexpr nvrtcResult NVRTC_SUCCESS = 0;
inline constexpr nvrtcResult NVRTC_ERROR_COMPILATION = 6;

struct NvrtcApi {
  const char* (*nvrtcGetErrorString)(nvrtcResult);
  nvrtcResult (*nvrtcVersion)(int*, int*);
  nvrtcResult (*nvrtcGetNumSupportedArchs)(int*);
  nvrtcResult (*nvrtcGetSupportedArchs)(int*);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                    const char* const*);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, std::size_t*);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, std::size_t*);
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, std::size_t*);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcAddNameExpression)(nvrtcProgram, const char*);
  nvrtcResult (*nvrtcGetLoweredName)(nvrtcProgram, const char*, const char**);
};

struct NvrtcInfo {
  std::string path;          // the library that was loaded
  int major = 0, minor = 0;  // nvrtcVersion
  std::vector<int> archs;    // supported sm numbers, e.g. 75 ... 120
};

// The loaded NVRTC, or nullptr with `reason` set (every path tried and why each failed).
const NvrtcApi* nvrtc_api(std::string* reason = nullptr);
const NvrtcInfo& nvrtc_info();  // valid once nvrtc_api() returned non-null

}  // namespace opkit::cuda
