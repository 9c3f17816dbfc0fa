// The backend registry (opkit/registry.hpp): the built-in backends, then whatever the program
// registers, each under a unique name.
#include "opkit/registry.hpp"

#include <algorithm>
#include <mutex>

#include "backend/backend.hpp"
#include "opkit/error.hpp"
#include "registry_list.hpp"

namespace opkit {
namespace {

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 32) return false;
  auto ok = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'; };
  return std::all_of(name.begin(), name.end(), ok) && name.front() != '-' && name.front() != '_';
}

struct Registry {
  std::mutex mutex;
  std::vector<std::shared_ptr<backend::Backend>> backends;

  Registry() {
#if OPKIT_WITH_CUDA
    backends.push_back(backend::make_cuda_backend());
#endif
#if OPKIT_WITH_CPU_BACKEND
    backends.push_back(backend::make_cpu_backend());
#endif
  }
};

Registry& registry() {
  static auto* r = new Registry();  // never destroyed: devices and modules may outlive static destruction
  return *r;
}

}  // namespace

void register_backend(std::shared_ptr<backend::Backend> backend) {
  if (!backend) throw Error(Errc::invalid_argument, "register_backend", "null backend");
  const std::string name = backend->name();
  if (!valid_name(name))
    throw Error(Errc::invalid_argument, "register_backend",
                "'" + name + "' is not a backend name (lower-case letters, digits, '-' and '_', at most 32)");
  if (name == "auto" || name == "all" || name == "host")
    throw Error(Errc::invalid_argument, "register_backend",
                "'" + name + "' is a word of the device vocabulary, not a backend name");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const auto& b : r.backends)
    if (b->name() == name)
      throw Error(Errc::invalid_argument, "register_backend", "a backend named '" + name + "' is already registered");
  r.backends.push_back(std::move(backend));
}

std::vector<std::shared_ptr<backend::Backend>> detail::registered_backends() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.backends;
}

std::vector<BackendStatus> backends() {
  std::vector<BackendStatus> out;
  for (const auto& b : detail::registered_backends()) {
    const bool available = b->available();
    out.push_back({b->name(), available, available ? std::string() : b->unavailable_reason(), b->is_gpu()});
  }
  return out;
}

backend::Backend* find_backend(std::string_view name) {
  for (const auto& b : detail::registered_backends())
    if (b->name() == name) return b.get();
  return nullptr;
}

std::string backend_names() {
  std::string names;
  for (const auto& b : detail::registered_backends()) names += (names.empty() ? "" : ", ") + b->name();
  return names.empty() ? "none" : names;
}

}  // namespace opkit
