// The CPU backend ("cpu"): one device, always available: memory and Device::load of a prebuilt
// kernel object need no compiler; compiling without one throws Error(Errc::unavailable) saying so.
#include <mutex>

#include "backend/backend.hpp"
#include "cpu_device.hpp"
#include "host_compiler.hpp"
#include "kernel_compiler.hpp"
#include "opkit/cpu_backend.hpp"
#include "opkit/error.hpp"
#include "opkit/registry.hpp"

namespace opkit::backend {
namespace {

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  bool is_gpu() const override { return false; }
  int dlpack_device_type() const override { return 1; }  // kDLCPU
  std::string kernel_language() const override { return "cuda"; }
  bool available() override { return true; }
  std::string unavailable_reason() override { return {}; }
  int device_count() override { return 1; }
  std::shared_ptr<Device> device(int ordinal) override {
    if (ordinal != 0)
      throw Error(Errc::unavailable, "CPU backend",
                  "there is one CPU device, ordinal 0; ordinal " + std::to_string(ordinal) + " does not exist");
    std::call_once(once_, [this] { device_ = std::make_shared<cpu::CpuDevice>(*this, 0); });
    return device_;
  }

  CompiledProgram compile(const ProgramSpec& spec, const std::string& arch) override {
    check_arch(arch);
    return cpu::compile_kernels(spec, cpu::host_compiler());
  }
  std::string compiler_identity(const std::string& arch) override {
    check_arch(arch);
    return cpu::kernel_compiler_identity(cpu::host_compiler());
  }
  // The host compiler that builds kernels: "g++ 12.2.0 (/usr/bin/c++)", or why there is none.
  std::optional<RuntimeDependency> runtime_dependency() override {
    RuntimeDependency compiler;
    try {
      const cpu::HostCompiler& found = cpu::host_compiler();
      compiler.description = found.description();
      compiler.path = found.path;
      compiler.usable = true;
    } catch (const std::exception& e) {
      const auto* error = dynamic_cast<const Error*>(&e);
      compiler.reason = error != nullptr ? error->message() : std::string(e.what());
      compiler.description = "no host compiler: " + compiler.reason;
    }
    return compiler;
  }

 private:
  // The host compiler builds for this machine only.
  static void check_arch(const std::string& arch) {
    if (!arch.empty() && arch != cpu::host_arch())
      throw Error(Errc::invalid_argument, "CPU backend",
                  "the CPU backend compiles for this machine (" + cpu::host_arch() + "), not for '" + arch + "'");
  }

  std::once_flag once_;
  std::shared_ptr<Device> device_;
};

}  // namespace

std::shared_ptr<Backend> make_cpu_backend() {
  return std::make_shared<CpuBackend>();
}

std::shared_ptr<Device> make_cpu_device(unsigned workers) {
  Backend* cpu = find_backend("cpu");
  if (cpu == nullptr) throw Error(Errc::unavailable, "make_cpu_device", "this build of opkit has no CPU backend");
  return std::make_shared<cpu::CpuDevice>(*cpu, workers);
}

}  // namespace opkit::backend
