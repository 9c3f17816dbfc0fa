// backend::cpu_backend(): one device, always available: memory and Device::load of a prebuilt
// kernel object need no compiler; compiling without one throws Error(Errc::unavailable) saying so.
#include "cpu_backend.hpp"

#include <mutex>

#include "backend/backend.hpp"
#include "cpu_device.hpp"
#include "host_compiler.hpp"
#include "opkit/error.hpp"

namespace opkit::backend {
namespace {

class CpuBackend final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::cpu; }
  bool available() override { return true; }
  std::string unavailable_reason() override { return {}; }
  int device_count() override { return 1; }
  std::shared_ptr<Device> device(int ordinal) override {
    if (ordinal != 0)
      throw Error(Errc::unavailable, "CPU backend",
                  "there is one CPU device, ordinal 0; ordinal " + std::to_string(ordinal) + " does not exist");
    std::call_once(once_, [this] { device_ = std::make_shared<cpu::CpuDevice>(); });
    return device_;
  }

 private:
  std::once_flag once_;
  std::shared_ptr<Device> device_;
};

}  // namespace

Backend& cpu_backend() {
  // Never destroyed: devices, modules and background compiles may outlive static destruction.
  static auto* backend = new CpuBackend();
  return *backend;
}

std::string cpu_compiler_description() {
  try {
    return cpu::host_compiler().description();
  } catch (const std::exception& e) {
    const auto* error = dynamic_cast<const Error*>(&e);
    return "no host compiler: " + (error != nullptr ? error->message() : std::string(e.what()));
  }
}

}  // namespace opkit::backend
