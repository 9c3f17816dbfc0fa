// The bounded in-process module cache (see module_cache.hpp).
#include "module_cache.hpp"

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "backend/backend.hpp"
#include "opkit/error.hpp"

namespace opkit::detail {
namespace {

std::size_t capacity_from_environment() {
  const char* text = std::getenv("OPKIT_MODULE_CACHE");
  if (text == nullptr || *text == '\0') return ModuleCache::default_capacity;
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(text, &end, 10);
  if (*text < '0' || *text > '9' || *end != '\0' || errno != 0 || n > ModuleCache::max_capacity)
    throw Error(Errc::invalid_argument, "OPKIT_MODULE_CACHE",
                std::string("OPKIT_MODULE_CACHE=") + text + " is not a module count between 0 and " +
                    std::to_string(ModuleCache::max_capacity));
  return static_cast<std::size_t>(n);
}

}  // namespace

ModuleCache& ModuleCache::global() {
  static ModuleCache cache(capacity_from_environment());
  return cache;
}

ModuleCache::Entry ModuleCache::get_or_load(const std::shared_ptr<backend::Device>& device, const std::string& key,
                                            const std::function<CompiledProgram()>& build) {
  std::pair<const backend::Device*, std::string> wanted{device.get(), key};
  {
    std::lock_guard lock(mutex_);
    if (Entry* hit = entries_.find(wanted)) return *hit;
  }
  auto program = std::make_shared<const CompiledProgram>(build());
  Entry loaded{device->load(*program), std::move(program), device};
  std::vector<Entry> evicted;  // released after the lock: unloading a module may take a while
  std::lock_guard lock(mutex_);
  return entries_.insert(wanted, std::move(loaded), evicted);
}

std::size_t ModuleCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace opkit::detail
