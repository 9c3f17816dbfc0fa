// The internal backend interface. A backend (CUDA, CPU; later Ascend, HIP, OpenCL) implements
// these five small classes; the public API (opkit::Device, Module, Kernel, Stream, Event) is a thin
// shell over them that adds caching, argument checking and error context. docs/backends.md
// explains how a new backend plugs in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "opkit/device.hpp"
#include "opkit/kernel.hpp"
#include "opkit/program.hpp"

namespace opkit::backend {

class Stream {
 public:
  virtual ~Stream() = default;
  virtual void synchronize() = 0;
  virtual void* native_handle() = 0;
};

class Event {
 public:
  virtual ~Event() = default;
  virtual void record(Stream& stream) = 0;
  virtual void synchronize() = 0;
  // Milliseconds from `start` to this event.
  virtual float elapsed_ms_since(Event& start) = 0;
};

// The parameter list of a kernel as the backend knows it (sizes in bytes), when it knows it.
struct ParamInfo {
  bool known = false;
  std::vector<std::size_t> sizes;
};

class Function {
 public:
  virtual ~Function() = default;
  // args[i] points at parameter i's value; sizes[i] is its size in bytes. `stream` is never null.
  virtual void launch(const LaunchConfig& config, Stream& stream, void** args, const std::size_t* sizes,
                      std::size_t count) = 0;
  virtual KernelAttributes attributes() = 0;
  virtual ParamInfo params() = 0;
};

class Module {
 public:
  virtual ~Module() = default;
  // The function with this symbol, or nullptr when the module has none.
  virtual std::shared_ptr<Function> function(const std::string& symbol) = 0;
};

class Device : public std::enable_shared_from_this<Device> {
 public:
  virtual ~Device() = default;

  virtual const DeviceInfo& info() const = 0;

  // Source -> binary for this device, with no caching (the front end caches).
  virtual CompiledProgram compile(const ProgramSpec& spec) = 0;
  // Everything besides the spec that changes the binary: compiler version, target, flags.
  virtual std::string compiler_identity() = 0;
  virtual std::shared_ptr<Module> load(const CompiledProgram& program) = 0;

  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* ptr) noexcept = 0;
  // `stream` null: synchronous with respect to the host.
  virtual void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, Stream* stream) = 0;
  virtual void fill(void* dst, std::uint32_t pattern, std::size_t pattern_bytes, std::size_t count, Stream* stream) = 0;
  virtual std::size_t free_memory() = 0;

  virtual std::shared_ptr<Stream> default_stream() = 0;
  virtual std::shared_ptr<Stream> create_stream() = 0;
  virtual std::shared_ptr<Stream> borrow_stream(void* native_handle) = 0;
  virtual std::shared_ptr<Event> create_event() = 0;
  virtual void synchronize() = 0;

  virtual bool supports(std::string_view op) const = 0;
};

// One API (CUDA driver, CPU host compiler, ...). Backends are process-wide singletons, created
// lazily; a backend whose libraries are missing reports why instead of failing.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  virtual bool available() = 0;
  virtual std::string unavailable_reason() = 0;  // "" when available
  virtual int device_count() = 0;
  virtual std::shared_ptr<Device> device(int ordinal) = 0;  // throws Error(unavailable) when out of range
};

Backend& cuda_backend();
Backend& cpu_backend();

}  // namespace opkit::backend
