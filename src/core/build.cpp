// The one compile path (opkit/target.hpp): a Target names a registered backend, which compiles
// with no device; build() puts the disk cache around it.
#include <algorithm>
#include <string>

#include "opkit/backend.hpp"
#include "opkit/error.hpp"
#include "opkit/registry.hpp"
#include "opkit/target.hpp"

namespace opkit {
namespace {

backend::Backend& backend_for(const Target& target) {
  backend::Backend* backend = find_backend(target.backend);
  if (backend == nullptr)
    throw Error(Errc::invalid_argument, "compile",
                "no backend named '" + target.backend + "' to compile for (registered: " + backend_names() + ")");
  return *backend;
}

}  // namespace

std::optional<CudaArch> parse_cuda_arch(std::string_view arch) {
  CudaArch out;
  for (std::string_view prefix : {"sm_", "compute_"})
    if (arch.starts_with(prefix)) {
      out.ptx = prefix == "compute_";
      arch.remove_prefix(prefix.size());
      break;
    }
  while (!arch.empty() && (arch.back() == 'a' || arch.back() == 'f')) arch.remove_suffix(1);
  if (arch.empty() || arch.size() > 3 ||
      !std::all_of(arch.begin(), arch.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  out.sm = std::stoi(std::string(arch));
  if (out.sm == 0) return std::nullopt;
  return out;
}

CompiledProgram compile(const Program& program, const Target& target) {
  return backend_for(target).compile(program.spec(), target.arch);
}

std::string cache_key(const Program& program, const Target& target) {
  return KernelCache::key(program.spec(), backend_for(target).compiler_identity(target.arch));
}

BuildResult build(const Program& program, const Target& target, KernelCache& cache) {
  backend::Backend& backend = backend_for(target);
  BuildResult result;
  result.key = KernelCache::key(program.spec(), backend.compiler_identity(target.arch));
  if (cache.enabled()) {
    if (auto hit = cache.load(result.key)) {
      result.program = std::move(*hit);
      result.cache = CacheOutcome::hit;
      return result;
    }
  }
  result.program = backend.compile(program.spec(), target.arch);
  if (cache.enabled()) {
    if (KernelCache::StoreResult stored = cache.store(result.key, result.program)) {
      result.cache = CacheOutcome::miss;
    } else {
      result.cache = CacheOutcome::not_stored;
      result.cache_error = std::move(stored.error);
    }
  }
  return result;
}

}  // namespace opkit
