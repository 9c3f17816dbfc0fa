// opkit::Device: one GPU (or the CPU) behind a backend. A cheap, copyable handle; everything
// else (modules, buffers, streams) keeps the device it came from alive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "opkit/program.hpp"

namespace opkit {

namespace backend {
class Device;
}
class Module;
class Stream;
class Event;
template <class T>
class DeviceBuffer;

enum class BackendKind : std::uint8_t { cuda, cpu };
const char* backend_kind_name(BackendKind kind) noexcept;

enum class CopyKind : std::uint8_t { host_to_device, device_to_host, device_to_device };

struct DeviceInfo {
  BackendKind backend = BackendKind::cpu;
  int ordinal = 0;               // index within its backend
  std::string name;              // "NVIDIA H200", "AMD EPYC 7B13 (16 threads)"
  std::string arch;              // "sm_90" for CUDA, the host compiler's target for the CPU
  int compute_units = 0;         // multiprocessors, or CPU threads
  std::size_t total_memory = 0;  // bytes
  int clock_khz = 0;             // peak SM clock where known, else 0
  std::string driver;            // driver / runtime version string
};

class Device {
 public:
  // The first CUDA GPU if one works, else the CPU backend.
  static Device best();
  // The CUDA GPU with this ordinal; throws Error(Errc::unavailable) saying why there is none.
  static Device cuda(int ordinal = 0);
  static Device cpu();
  // Every working CUDA GPU (possibly none).
  static std::vector<Device> cuda_devices();
  // Every device of every available backend, GPUs first.
  static std::vector<Device> all();

  explicit Device(std::shared_ptr<backend::Device> impl);

  const DeviceInfo& info() const;
  BackendKind kind() const { return info().backend; }
  bool is_gpu() const { return kind() != BackendKind::cpu; }

  // Program -> CompiledProgram for this device, through the in-process and on-disk caches.
  CompiledProgram build(const Program& program) const;
  // CompiledProgram -> Module (also the path for prebuilt binaries).
  Module load(const CompiledProgram& program) const;
  // build + load; the same Program compiled twice in one process compiles once.
  Module compile(const Program& program) const;

  template <class T>
  DeviceBuffer<T> alloc(std::size_t count) const;

  Stream default_stream() const;
  Stream create_stream() const;
  // Wraps a stream created elsewhere (PyTorch, CuPy) without taking ownership.
  Stream borrow_stream(void* native_handle) const;
  Event create_event() const;
  void synchronize() const;

  // Whether an operator ("sha256", "bitcoin_mine", ...) runs on this device.
  bool supports(std::string_view op) const;
  std::size_t free_memory() const;

  // Byte-level memory interface that DeviceBuffer builds on.
  void* allocate(std::size_t bytes) const;
  void deallocate(void* ptr) const noexcept;
  void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, const Stream* stream = nullptr) const;
  // Fills `count` elements of `pattern_bytes` (1, 2 or 4) bytes each with the low bytes of pattern.
  void fill(void* dst, std::uint32_t pattern, std::size_t pattern_bytes, std::size_t count,
            const Stream* stream = nullptr) const;

  backend::Device& impl() const { return *impl_; }
  const std::shared_ptr<backend::Device>& shared_impl() const { return impl_; }
  friend bool operator==(const Device& a, const Device& b) { return a.impl_ == b.impl_; }

 private:
  std::shared_ptr<backend::Device> impl_;
};

}  // namespace opkit
