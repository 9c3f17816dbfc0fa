// Module: a compiled program loaded on a device. Shared-owned; kernels keep it alive.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "opkit/device.hpp"
#include "opkit/kernel.hpp"
#include "opkit/program.hpp"

namespace opkit {

namespace backend {
class Module;
}

class Module {
 public:
  Module(Device device, std::shared_ptr<backend::Module> impl, std::shared_ptr<const CompiledProgram> program);

  // The kernel with this name as written in the source ("test_kernel", "f<int>") or its symbol.
  // Throws Error(Errc::not_found) listing the kernels the module has.
  Kernel kernel(std::string_view name) const;

  const CompiledProgram& program() const { return *program_; }
  const Device& device() const { return device_; }

 private:
  Device device_;
  std::shared_ptr<backend::Module> impl_;
  std::shared_ptr<const CompiledProgram> program_;
};

}  // namespace opkit
