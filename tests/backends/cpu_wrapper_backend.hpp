// The Backend half of the test backends whose one device wraps a CPU-backend device ("cpu-serial",
// "cpu-deferred"): the CPU backend compiles for them (the same kernel objects, which the cache
// shares), they report their own name, and WrappedDevice (constructed from the backend) does the
// rest. Built against opkit's public headers only, as a backend outside the library would be.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "opkit/backend.hpp"
#include "opkit/error.hpp"
#include "opkit/registry.hpp"

namespace opkit::test {

template <class WrappedDevice>
class CpuWrapperBackend final : public backend::Backend {
 public:
  explicit CpuWrapperBackend(std::string name) : name_(std::move(name)) {}

  std::string name() const override { return name_; }
  bool is_gpu() const override { return false; }
  int dlpack_device_type() const override { return 1; }  // kDLCPU: its memory is host memory
  std::string kernel_language() const override { return "cuda"; }

  bool available() override { return cpu().available(); }
  std::string unavailable_reason() override { return cpu().unavailable_reason(); }
  int device_count() override { return available() ? 1 : 0; }
  std::shared_ptr<backend::Device> device(int ordinal) override {
    if (ordinal != 0)
      throw Error(
          Errc::unavailable, name_ + " backend",
          "there is one " + name_ + " device, ordinal 0; ordinal " + std::to_string(ordinal) + " does not exist");
    std::call_once(once_, [this] { device_ = std::make_shared<WrappedDevice>(*this); });
    return device_;
  }

  // The same binaries as the CPU backend's: the cache shares them.
  CompiledProgram compile(const ProgramSpec& spec, const std::string& arch) override {
    return cpu().compile(spec, arch);
  }
  std::string compiler_identity(const std::string& arch) override { return cpu().compiler_identity(arch); }

 private:
  // The CPU backend, which compiles for this backend too: its kernel objects are what we load.
  backend::Backend& cpu() const {
    backend::Backend* cpu = find_backend("cpu");
    if (cpu == nullptr) throw Error(Errc::unavailable, name_ + " backend", "this build of opkit has no CPU backend");
    return *cpu;
  }

  std::string name_;
  std::once_flag once_;
  std::shared_ptr<backend::Device> device_;
};

}  // namespace opkit::test
