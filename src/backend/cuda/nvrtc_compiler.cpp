// NVRTC compilation with opkit's built-in standard-header stand-ins and PyCUDA-style name
// resolution (C++-linkage kernels found in the source are registered as name expressions).
#include "nvrtc_compiler.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <type_traits>
#include <utility>

#include "nvrtc_api.hpp"
#include "opkit/error.hpp"
#include "opkit_embedded.hpp"

namespace opkit::cuda {
namespace {

// Headers NVRTC lacks; a header of the same name given by the user wins.
constexpr std::array<const char*, 14> kJitHeaders = {"stdint.h", "cstdint",   "stddef.h", "cstddef", "limits.h",
                                                     "climits",  "stdbool.h", "string.h", "cstring", "stdio.h",
                                                     "cstdio",   "assert.h",  "cassert",  "math.h"};

const NvrtcApi& require_nvrtc() {
  std::string reason;
  const NvrtcApi* api = nvrtc_api(&reason);
  if (api == nullptr) throw Error(Errc::unavailable, "loading NVRTC", reason);
  return *api;
}

// The arch NVRTC will actually compile for, and whether that is a cubin.
struct Target {
  int sm;
  bool cubin;
};

Target resolve_target(int sm, bool ptx) {
  const auto& archs = nvrtc_info().archs;
  if (archs.empty() || std::find(archs.begin(), archs.end(), sm) != archs.end()) return {sm, !ptx};
  int best = 0;
  for (int a : archs)
    if (a <= sm && a > best) best = a;
  if (best == 0)  // bad input, as an arch too new for any cubin or PTX is (exit 2 in the CLI)
    throw Error(Errc::invalid_argument, "nvrtcCompileProgram",
                "NVRTC " + std::to_string(nvrtc_info().major) + "." + std::to_string(nvrtc_info().minor) +
                    " cannot target sm_" + std::to_string(sm) + ": the oldest arch it supports is sm_" +
                    std::to_string(archs.front()) + "; use an older CUDA toolkit's NVRTC (OPKIT_NVRTC)");
  return {best, false};
}

// Owns one nvrtcProgram. Move-only: a copy would destroy the program twice.
class ProgramHandle {
 public:
  explicit ProgramHandle(const NvrtcApi& api) noexcept : api_(&api) {}
  ~ProgramHandle() {
    if (program_ != nullptr) api_->nvrtcDestroyProgram(&program_);
  }
  ProgramHandle(const ProgramHandle&) = delete;
  ProgramHandle& operator=(const ProgramHandle&) = delete;
  ProgramHandle(ProgramHandle&& other) noexcept : api_(other.api_), program_(std::exchange(other.program_, nullptr)) {}
  ProgramHandle& operator=(ProgramHandle&& other) noexcept {
    std::swap(api_, other.api_);
    std::swap(program_, other.program_);
    return *this;
  }

  nvrtcProgram get() const noexcept { return program_; }
  nvrtcProgram* out() noexcept { return &program_; }  // for nvrtcCreateProgram, on an empty handle

 private:
  const NvrtcApi* api_;
  nvrtcProgram program_ = nullptr;
};
static_assert(!std::is_copy_constructible_v<ProgramHandle> && !std::is_copy_assignable_v<ProgramHandle>);

std::string program_log(const NvrtcApi& api, nvrtcProgram program) {
  std::size_t size = 0;
  if (api.nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  api.nvrtcGetProgramLog(program, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

void check(const NvrtcApi& api, nvrtcResult rc, const char* stage, const ProgramSpec& spec) {
  if (rc != NVRTC_SUCCESS)
    throw Error(Errc::runtime, stage, api.nvrtcGetErrorString(rc))
        .with_code(rc, api.nvrtcGetErrorString(rc))
        .with_source_name(spec.name);
}

}  // namespace

std::string nvrtc_identity(int sm, bool ptx) {
  require_nvrtc();
  Target t = resolve_target(sm, ptx);
  const auto& info = nvrtc_info();
  return "nvrtc-" + std::to_string(info.major) + "." + std::to_string(info.minor) + (t.cubin ? "-sm_" : "-compute_") +
         std::to_string(t.sm);
}

CompiledProgram nvrtc_compile(const ProgramSpec& spec, int sm, bool ptx) {
  const NvrtcApi& api = require_nvrtc();
  const Target target = resolve_target(sm, ptx);

  // Headers: the user's first, then the stand-ins for names the user did not provide.
  std::vector<std::string> header_names, header_bodies;
  for (const auto& [name, body] : spec.headers) {
    header_names.push_back(name);
    header_bodies.push_back(body);
  }
  for (const char* name : kJitHeaders) {
    if (std::any_of(spec.headers.begin(), spec.headers.end(), [&](const auto& h) { return h.first == name; })) continue;
    std::string_view body = detail::embedded_source(std::string("jit/") + name);
    if (body.empty()) continue;
    header_names.emplace_back(name);
    header_bodies.emplace_back(body);
  }
  std::vector<const char*> name_ptrs, body_ptrs;
  for (std::size_t i = 0; i < header_names.size(); ++i) {
    name_ptrs.push_back(header_names[i].c_str());
    body_ptrs.push_back(header_bodies[i].c_str());
  }

  std::vector<std::string> options;
  options.push_back(std::string("--gpu-architecture=") + (target.cubin ? "sm_" : "compute_") +
                    std::to_string(target.sm));
  options.emplace_back("-default-device");
  if (std::none_of(spec.options.begin(), spec.options.end(),
                   [](const std::string& o) { return o.rfind("-std", 0) == 0; }))
    options.emplace_back("-std=c++17");
  for (const auto& [macro, value] : spec.defines) options.push_back("-D" + macro + (value.empty() ? "" : "=" + value));
  for (const auto& dir : spec.include_dirs) options.push_back("-I" + dir);
  for (const auto& opt : spec.options) options.push_back(opt);
  std::vector<const char*> option_ptrs;
  option_ptrs.reserve(options.size());
  for (const auto& o : options) option_ptrs.push_back(o.c_str());

  ProgramHandle handle(api);
  check(api,
        api.nvrtcCreateProgram(handle.out(), spec.source.c_str(), spec.name.c_str(), static_cast<int>(name_ptrs.size()),
                               body_ptrs.data(), name_ptrs.data()),
        "nvrtcCreateProgram", spec);

  std::vector<std::string> expressions;
  for (const auto& name : find_kernel_names(spec.source)) expressions.push_back("&" + name);
  for (const auto& expr : spec.name_expressions) expressions.push_back(expr[0] == '&' ? expr : "&" + expr);
  for (const auto& expr : expressions)
    check(api, api.nvrtcAddNameExpression(handle.get(), expr.c_str()), "nvrtcAddNameExpression", spec);

  nvrtcResult rc = api.nvrtcCompileProgram(handle.get(), static_cast<int>(option_ptrs.size()), option_ptrs.data());
  std::string log = program_log(api, handle.get());
  if (rc != NVRTC_SUCCESS) {
    auto first_error = log.find("error");
    std::string summary = rc == NVRTC_ERROR_COMPILATION ? "compilation failed" : api.nvrtcGetErrorString(rc);
    if (first_error != std::string::npos) {
      auto line_start = log.rfind('\n', first_error);
      auto line_end = log.find('\n', first_error);
      summary =
          log.substr(line_start == std::string::npos ? 0 : line_start + 1,
                     line_end == std::string::npos ? std::string::npos
                                                   : line_end - (line_start == std::string::npos ? 0 : line_start + 1));
    }
    throw Error(Errc::compile, "nvrtcCompileProgram", summary)
        .with_code(rc, api.nvrtcGetErrorString(rc))
        .with_log(std::move(log))
        .with_options(std::move(options))
        .with_source_name(spec.name);
  }

  CompiledProgram out;
  out.format = target.cubin ? BinaryFormat::cubin : BinaryFormat::ptx;
  out.target = (target.cubin ? "sm_" : "compute_") + std::to_string(target.sm);
  out.source_name = spec.name;
  out.log = std::move(log);
  std::size_t size = 0;
  if (target.cubin) {
    check(api, api.nvrtcGetCUBINSize(handle.get(), &size), "nvrtcGetCUBINSize", spec);
    out.binary.resize(size);
    check(api, api.nvrtcGetCUBIN(handle.get(), reinterpret_cast<char*>(out.binary.data())), "nvrtcGetCUBIN", spec);
  } else {
    check(api, api.nvrtcGetPTXSize(handle.get(), &size), "nvrtcGetPTXSize", spec);
    out.binary.resize(size);
    check(api, api.nvrtcGetPTX(handle.get(), reinterpret_cast<char*>(out.binary.data())), "nvrtcGetPTX", spec);
  }
  for (const auto& expr : expressions) {
    const char* lowered = nullptr;
    if (api.nvrtcGetLoweredName(handle.get(), expr.c_str(), &lowered) == NVRTC_SUCCESS && lowered != nullptr)
      out.lowered_names[expr.substr(1)] = lowered;
  }
  return out;
}

void nvrtc_warm_up() noexcept {
  try {
    static const bool warmed = [] {
      ProgramSpec spec;
      spec.source = "extern \"C\" __global__ void opkit_warm_up(unsigned int* p) { atomicAdd(p, 1u); }";
      spec.name = "opkit_warm_up.cu";
      nvrtc_compile(spec, 90);
      return true;
    }();
    (void)warmed;
  } catch (...) {  // NVRTC missing or failing: the next real compile reports it
  }
}

}  // namespace opkit::cuda
