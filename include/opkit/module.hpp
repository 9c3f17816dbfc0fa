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
  // The module-scope variable (__device__ or __constant__) with this symbol: its device address
  // and size, for copies to and from it (PyCUDA's get_global). A variable at global namespace
  // scope has its plain name as its symbol; one in a namespace has its mangled name. Throws
  // Error(Errc::not_found) when there is none.
  GlobalVariable global(std::string_view symbol) const;

  const CompiledProgram& program() const { return *program_; }
  const Device& device() const { return device_; }

 private:
  Device device_;
  std::shared_ptr<backend::Module> impl_;
  std::shared_ptr<const CompiledProgram> program_;
};

}  // namespace opkit
