// The backend interface: what a device API (CUDA, the CPU backend, a test-only backend; later
// HIP, Ascend) implements so that opkit's public shell (Device, Module, Kernel, Stream, Event)
// runs on it. Public, so a backend can live outside the library: implement these classes and
// hand the Backend to opkit::register_backend (opkit/registry.hpp). docs/backends.md walks through
// a complete one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opkit/device.hpp"
#include "opkit/kernel.hpp"
#include "opkit/program.hpp"

namespace opkit::backend {

class Event;

// The defaults of wait, query and Event::query wait on the host: right for a backend whose streams
// run work as it is queued (the CPU backend), correct (if slower) for any other.
class Stream {
 public:
  virtual ~Stream() = default;
  virtual void synchronize() = 0;
  virtual void* native_handle() = 0;
  // Work queued on this stream after the call runs after the work `event` recorded (cross-stream
  // ordering without the host waiting, on a GPU).
  virtual void wait(Event& event);
  // Whether all work queued so far has finished; never blocks where the backend can say so.
  virtual bool query() {
    synchronize();
    return true;
  }
};

class Event {
 public:
  virtual ~Event() = default;
  virtual void record(Stream& stream) = 0;
  virtual void synchronize() = 0;
  // Milliseconds from `start` to this event.
  virtual float elapsed_ms_since(Event& start) = 0;
  // Whether the work it recorded has finished (true for an event never recorded).
  virtual bool query() {
    synchronize();
    return true;
  }
};

inline void Stream::wait(Event& event) {
  event.synchronize();
}

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
  // Kernel::carve_shared_memory_for; backends without an L1 / shared-memory split ignore it.
  virtual void carve_shared_memory_for(unsigned /*blocks_per_unit*/) {}
};

class Module {
 public:
  virtual ~Module() = default;
  // The function with this symbol, or nullptr when the module has none.
  virtual std::shared_ptr<Function> function(const std::string& symbol) = 0;
  // The module-scope variable (__device__, __constant__) with this symbol, or nullopt when the
  // module has none (or the backend cannot find variables).
  virtual std::optional<GlobalVariable> global(const std::string& symbol) {
    (void)symbol;
    return std::nullopt;
  }
};

class Backend;

// What a backend needs at run time and loads or runs then (the CUDA backend: the driver,
// libcuda.so.1; the CPU backend: the host compiler), as `opkit doctor` reports it.
struct RuntimeDependency {
  std::string description;  // in words: "g++ 13.2.0 (/usr/bin/c++)", "no host compiler: why"
  std::string path;         // where it was found; "" when not found
  int version = 0;          // its own version number (the CUDA driver: 13000 for 13.0); 0 when unknown
  bool usable = false;      // found and working
  std::string reason;       // why not, when not usable
};

class Device : public std::enable_shared_from_this<Device> {
 public:
  // The alignment of the default allocate_pinned's memory (a cache line).
  static constexpr std::size_t pinned_alignment = 64;

  virtual ~Device() = default;

  // The backend that made this device; it outlives the device (backends are never destroyed).
  virtual Backend& backend() const = 0;
  // info().backend must be backend().name().
  virtual const DeviceInfo& info() const = 0;

  // A CompiledProgram of this backend's format (from Backend::compile, the cache, or a file).
  virtual std::shared_ptr<Module> load(const CompiledProgram& program) = 0;

  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* ptr) noexcept = 0;
  // Stream-ordered memory: usable by work queued on `stream` after the call, and freed once the
  // work queued there before the free has run, with no wait on either end. The defaults are the
  // plain pair with a wait for the stream before the free: right for a backend whose streams run
  // work as it is queued (the CPU backend), safe for any other.
  virtual void* allocate_on(std::size_t bytes, Stream& stream) {
    (void)stream;
    return allocate(bytes);
  }
  virtual void deallocate_on(void* ptr, Stream& stream) noexcept {
    try {
      stream.synchronize();
    } catch (...) {  // a faulted stream: the memory is freed regardless
    }
    deallocate(ptr);
  }
  // Page-locked ("pinned") host memory for this device's copies: an asynchronous copy from it (or
  // into it) runs by DMA while the host goes on, where one from pageable memory goes through the
  // driver's own staging buffers and holds the host. The defaults are ordinary host memory: right
  // for a backend whose device memory is host memory (the CPU backend), correct (if slower) for
  // any other. Null for 0 bytes.
  virtual void* allocate_pinned(std::size_t bytes) {
    return bytes == 0 ? nullptr : ::operator new (bytes, std::align_val_t{pinned_alignment});
  }
  virtual void deallocate_pinned(void* ptr) noexcept { ::operator delete (ptr, std::align_val_t{pinned_alignment}); }
  // `stream` null: synchronous with respect to the host.
  virtual void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, Stream* stream) = 0;
  virtual void fill(void* dst, std::uint32_t pattern, std::size_t pattern_bytes, std::size_t count, Stream* stream) = 0;
  virtual std::size_t free_memory() = 0;

  virtual std::shared_ptr<Stream> default_stream() = 0;
  virtual std::shared_ptr<Stream> create_stream() = 0;
  virtual std::shared_ptr<Stream> borrow_stream(void* native_handle) = 0;
  virtual std::shared_ptr<Event> create_event() = 0;
  virtual void synchronize() = 0;
};

// One device API, registered once under its name and never destroyed. A backend whose libraries
// are missing stays registered and reports why (available() false), instead of failing.
class Backend {
 public:
  virtual ~Backend() = default;

  // The name devices are known by: "cuda", "cpu", "cpu-serial" (`name:N` picks device N).
  // Lower-case letters, digits, '-' and '_'; "auto", "all" and "host" are taken by the device
  // vocabulary (docs/cli.md, "Devices").
  virtual std::string name() const = 0;
  // Facts that shared code asks instead of testing the backend's name:
  virtual bool is_gpu() const = 0;             // separate device memory; Device::best() prefers it
  virtual int dlpack_device_type() const = 0;  // of its memory, as dlpack.h numbers them (kDLCPU 1, kDLCUDA 2)
  // The kernel language it compiles: "cuda" for CUDA C++ (the CUDA and CPU backends). Operators'
  // kernel sets (opkit/kernel_set.hpp) may declare kernels per language instead of per backend.
  virtual std::string kernel_language() const = 0;

  virtual bool available() = 0;
  virtual std::string unavailable_reason() = 0;  // "" when available
  virtual int device_count() = 0;
  virtual std::shared_ptr<Device> device(int ordinal) = 0;  // throws Error(unavailable) when out of range

  // Source -> binary for `arch` (a Target's arch; "" is the backend's default, where it has one),
  // with no device and no caching: opkit::build (opkit/target.hpp) adds the cache.
  virtual CompiledProgram compile(const ProgramSpec& spec, const std::string& arch) = 0;
  // A prebuilt binary in one of this backend's formats (a file `opkit compile` or the vendor's
  // toolchain wrote), described as a CompiledProgram: format, target, kernel symbols. nullopt
  // when the bytes are in none of its formats. `name` is the file's, for messages.
  // By value: a backend that recognises the bytes moves them into the CompiledProgram.
  virtual std::optional<CompiledProgram> recognize_binary(
      std::vector<std::uint8_t> bytes,  // NOLINT(performance-unnecessary-value-param): overrides move it
      const std::string& name) {
    (void)bytes;
    (void)name;
    return std::nullopt;
  }
  // The formats recognize_binary takes, in words for a message ("a cubin or PTX file"); "" if none.
  virtual std::string binary_files() const { return {}; }
  // Everything besides the spec that changes the binary for `arch`: compiler version, resolved
  // target, flags. It is the non-source part of the cache key.
  virtual std::string compiler_identity(const std::string& arch) = 0;
  // Loads the compiler's in-process libraries now, where it has any (NVRTC), with the static
  // state their first compile creates (the CUDA backend compiles a small kernel), and never
  // throws: a failure shows at the next compile. The compile queue calls it before it starts, so
  // that such state is torn down after the queue has joined at exit: state first made inside a
  // queued compile is destroyed before the queue, under a compile still running (NVRTC 13 hangs,
  // aborts or crashes then).
  virtual void load_compiler() noexcept {}
  // What it needs at run time, found or not; nullopt for a backend that needs nothing outside
  // the process.
  virtual std::optional<RuntimeDependency> runtime_dependency() { return std::nullopt; }
};

}  // namespace opkit::backend
