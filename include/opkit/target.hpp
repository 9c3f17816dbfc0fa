// Target: what a program is compiled for, without a device (a backend name and its arch), and the
// one build path that every compile goes through: key -> cache load -> compile -> cache store.
// Device::build, Device::compile and `opkit compile` all call build(); compile() is the uncached
// step, which needs no device (NVRTC needs no GPU), as in jitify2 and cuda.core.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "opkit/cache.hpp"
#include "opkit/program.hpp"

namespace opkit {

struct Target {
  std::string backend;  // a registered backend's name
  std::string arch;     // in that backend's terms; "" is the backend's default (the host, for "cpu")

  static Target cuda(std::string arch) { return {"cuda", std::move(arch)}; }  // "sm_90", "compute_90", "90"
  static Target cpu() { return {"cpu", ""}; }
  // "cuda:sm_90", "cpu"
  std::string text() const { return arch.empty() ? backend : backend + ":" + arch; }
};

// A CUDA arch as NVRTC takes it: sm_90 / sm_90a / 90 (a cubin) or compute_90 (PTX).
struct CudaArch {
  int sm = 0;  // 90
  bool ptx = false;
};
// nullopt when `arch` is none of "sm_XX", "sm_XXa", "compute_XX" or "XX".
std::optional<CudaArch> parse_cuda_arch(std::string_view arch);

// Compiles with the target's backend, uncached. Throws Error(invalid_argument) for an unknown
// backend or arch, Error(unavailable) when the compiler is missing, Error(compile) with the log.
CompiledProgram compile(const Program& program, const Target& target);

// The cache key of `program` for `target` (hex SHA-256 of the spec and the compiler identity).
std::string cache_key(const Program& program, const Target& target);

enum class CacheOutcome : std::uint8_t {
  off,         // the cache is disabled
  hit,         // loaded from the cache
  miss,        // compiled, and stored
  not_stored,  // compiled; storing failed (BuildResult::cache_error says why)
};

struct BuildResult {
  CompiledProgram program;
  std::string key;
  CacheOutcome cache = CacheOutcome::off;
  std::string cache_error;  // why the store failed, for not_stored
};

// key -> load -> compile -> store. A cache that cannot be read or written only costs time.
BuildResult build(const Program& program, const Target& target, KernelCache& cache = KernelCache::global());

}  // namespace opkit
