// Used only when the library is configured with OPKIT_WITH_CPU_BACKEND=OFF: the CPU backend then
// reports itself unavailable instead of failing to link.
#include "backend/backend.hpp"
#include "opkit/error.hpp"

namespace opkit::backend {
namespace {

class AbsentCpuBackend final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::cpu; }
  bool available() override { return false; }
  std::string unavailable_reason() override { return "this build of opkit has no CPU backend"; }
  int device_count() override { return 0; }
  std::shared_ptr<Device> device(int) override { throw Error(Errc::unavailable, "CPU backend", unavailable_reason()); }
};

}  // namespace

Backend& cpu_backend() {
  static AbsentCpuBackend backend;
  return backend;
}

}  // namespace opkit::backend
