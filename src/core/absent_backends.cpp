// The backends a build leaves out (OPKIT_WITH_CUDA=OFF, OPKIT_WITH_CPU_BACKEND=OFF; compiled only
// then): each reports itself unavailable, saying so, instead of failing to link.
#include <string>

#include "backend/backend.hpp"
#include "opkit/error.hpp"
#include "opkit/nvrtc.hpp"

namespace opkit::backend {
namespace {

class AbsentBackend final : public Backend {
 public:
  AbsentBackend(BackendKind kind, std::string name, std::string option)
      : kind_(kind), name_(std::move(name)), reason_("this build of opkit has no " + name_ + " (" + option + "=OFF)") {}
  BackendKind kind() const override { return kind_; }
  bool available() override { return false; }
  std::string unavailable_reason() override { return reason_; }
  int device_count() override { return 0; }
  std::shared_ptr<Device> device(int) override { throw Error(Errc::unavailable, name_, reason_); }

 private:
  BackendKind kind_;
  std::string name_;
  std::string reason_;
};

}  // namespace

#ifndef OPKIT_WITH_CUDA
Backend& cuda_backend() {
  static AbsentBackend backend(BackendKind::cuda, "CUDA backend", "OPKIT_WITH_CUDA");
  return backend;
}
#endif

#ifndef OPKIT_WITH_CPU_BACKEND
Backend& cpu_backend() {
  static AbsentBackend backend(BackendKind::cpu, "CPU backend", "OPKIT_WITH_CPU_BACKEND");
  return backend;
}
#endif

}  // namespace opkit::backend

#ifndef OPKIT_WITH_CUDA
namespace opkit::nvrtc {

Info info() {
  Info out;
  out.reason = backend::cuda_backend().unavailable_reason();
  return out;
}

CompiledProgram compile(const Program&, std::string_view) {
  throw Error(Errc::unavailable, "nvrtc::compile", backend::cuda_backend().unavailable_reason());
}

}  // namespace opkit::nvrtc
#endif
