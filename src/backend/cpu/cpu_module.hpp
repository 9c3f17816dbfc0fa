// Module and Function of the CPU backend: a loaded kernel shared object, its kernel table, and the
// launch that spreads a grid's blocks over the worker threads.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "opkit/backend.hpp"
#include "opkit_cpu_abi.h"
#include "shared_object.hpp"

namespace opkit::cpu {

class CpuModule final : public backend::Module {
 public:
  // Throws Error(Errc::load) for a binary that is not a host shared object for this machine or
  // does not carry a kernel table of this ABI version.
  // Its launches use at most max_workers threads of the pool (0: all of them).
  CpuModule(const CompiledProgram& program, unsigned max_workers);
  std::shared_ptr<backend::Function> function(const std::string& symbol) override;
  // From the object's symbol table: __device__ and __constant__ variables are plain globals here.
  std::optional<GlobalVariable> global(const std::string& symbol) override;

 private:
  std::shared_ptr<const SharedObject> object_;
  const opkit_cpu_module* table_ = nullptr;
  unsigned max_workers_;
  std::map<std::string, std::size_t> static_shared_;  // per kernel (static_shared.hpp)
  std::map<std::string, GlobalVariable, std::less<>> globals_;  // defined data objects, by symbol
};

class CpuFunction final : public backend::Function {
 public:
  CpuFunction(std::shared_ptr<const SharedObject> object, const opkit_cpu_module* table, const opkit_cpu_kernel* kernel,
              unsigned max_workers, std::size_t static_shared_bytes);
  // Runs the whole grid before returning (CPU streams are synchronous). A fault, __trap, failed
  // assert or escaped exception in any thread stops the launch and throws Error(Errc::launch).
  // An interrupt (opkit/interrupt.hpp) stops it and throws Error(Errc::interrupted).
  void launch(const LaunchConfig& config, backend::Stream& stream, void** args, const std::size_t* sizes,
              std::size_t count) override;
  KernelAttributes attributes() override;
  backend::ParamInfo params() override;

 private:
  std::shared_ptr<const SharedObject> object_;  // keeps the code loaded while this function lives
  const opkit_cpu_module* table_;
  const opkit_cpu_kernel* kernel_;
  unsigned max_workers_;
  std::size_t static_shared_bytes_;
};

}  // namespace opkit::cpu
