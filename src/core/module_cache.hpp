// ModuleCache: loaded modules by (device, cache key), so that the same program on the same device
// is compiled and loaded once per process. Bounded, least recently used out first: a process
// that compiles a program per job (a miner) keeps at most capacity() modules loaded through it.
// Entries are shared: an evicted module stays loaded for as long as a Module or Kernel still
// holds it, and is unloaded when the last of them goes.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "lru_map.hpp"
#include "opkit/program.hpp"

namespace opkit::backend {
class Device;
class Module;
}  // namespace opkit::backend

namespace opkit::detail {

class ModuleCache {
 public:
  // The capacity when $OPKIT_MODULE_CACHE is unset: modules loaded per process and cached.
  static constexpr std::size_t default_capacity = 64;
  static constexpr std::size_t max_capacity = 65536;

  struct Entry {
    std::shared_ptr<backend::Module> module;
    std::shared_ptr<const CompiledProgram> program;
    std::shared_ptr<backend::Device> device;  // keeps the key's device address from being reused
  };

  // capacity 0: nothing is kept (every call builds and loads).
  explicit ModuleCache(std::size_t capacity) : entries_(capacity) {}

  // The process's cache; capacity from $OPKIT_MODULE_CACHE (0..max_capacity), else
  // default_capacity. Throws Error(invalid_argument) naming the variable when it is not such a
  // number.
  static ModuleCache& global();

  // The entry for (device, key): the cached one, or `build()` loaded on `device` and cached.
  // `build` runs without the lock, so other threads use the cache meanwhile; two threads building
  // the same key both succeed and the first to finish is kept. Errors of `build` and of the load
  // propagate and cache nothing.
  Entry get_or_load(const std::shared_ptr<backend::Device>& device, const std::string& key,
                    const std::function<CompiledProgram()>& build);

  std::size_t size() const;
  std::size_t capacity() const noexcept { return entries_.capacity(); }

 private:
  mutable std::mutex mutex_;
  LruMap<std::pair<const backend::Device*, std::string>, Entry> entries_;
};

}  // namespace opkit::detail
