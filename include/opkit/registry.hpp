// The backend registry: every backend opkit knows, by name. The built-in ones (cuda, cpu, as the
// build enables them) are there from the start; a program or a test adds its own with
// register_backend before it asks for devices. Device::parse / Device::all read this registry.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace opkit {

namespace backend {
class Backend;
}

struct BackendStatus {
  std::string name;
  bool available = false;
  std::string reason;  // why not, when unavailable
  bool is_gpu = false;
};

// Adds a backend after the ones already registered. Throws Error(invalid_argument) for a null
// backend, a malformed name, a reserved word (auto, all, host) or a name that is taken.
void register_backend(std::shared_ptr<backend::Backend> backend);

// Every registered backend in registration order (built-in first), with whether it has devices.
std::vector<BackendStatus> backends();

// The registered backend of this name, or nullptr.
backend::Backend* find_backend(std::string_view name);

// The registered backends' names joined by ", " (for error messages that list the choices).
std::string backend_names();

}  // namespace opkit
