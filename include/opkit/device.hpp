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
namespace detail {
struct DeviceAccess;  // src/'s way to the backend object (src/core/device_access.hpp)
}
class Module;
class Stream;
class Event;
struct Target;
template <class T>
class DeviceBuffer;

enum class CopyKind : std::uint8_t { host_to_device, device_to_host, device_to_device };

struct DeviceInfo {
  std::string backend;                        // the backend's registered name: "cuda", "cpu", ...
  int ordinal = 0;                            // index within its backend
  std::string name;                           // "NVIDIA H200", "AMD EPYC 7B13 (16 threads)"
  std::string arch;                           // "sm_90" for CUDA, the host compiler's target for the CPU
  int compute_units = 0;                      // multiprocessors, or CPU threads
  std::string compute_unit_name = "threads";  // what compute_units counts: "SMs", "threads"
  int registers_per_unit = 0;    // 32-bit registers of one compute unit (occupancy); 0: not limited by them
  std::size_t total_memory = 0;  // bytes
  int clock_khz = 0;             // peak SM clock where known, else 0
  std::string driver;            // driver / runtime version string
};

class Device {
 public:
  // A device named in the one device vocabulary (docs/cli.md, "Devices"): "auto" (best()),
  // "cuda" (= "cuda:0"), "cuda:1", "cpu" (= "cpu:0", the CPU backend), or any registered
  // backend's "name[:N]". Throws Error(invalid_argument) naming the bad value and the valid ones,
  // or Error(unavailable) saying why the backend has no such device.
  static Device parse(std::string_view spec);
  // The first GPU of the first available GPU backend, else the CPU backend, else the first device
  // of any other backend.
  static Device best();
  // Shorthands for parse("cuda:N") and parse("cpu").
  static Device cuda(int ordinal = 0);
  static Device cpu();
  // Every device of every available backend, GPU backends first, then in registration order.
  static std::vector<Device> all();
  // Every device of one backend (none when it is unavailable); Error(invalid_argument) for a
  // name that is not registered.
  static std::vector<Device> all(std::string_view backend);

  explicit Device(std::shared_ptr<backend::Device> impl);

  const DeviceInfo& info() const;
  const std::string& backend() const { return info().backend; }
  bool is_gpu() const;
  // "cuda:0": the name parse() takes back.
  std::string id() const;
  // What this device's programs are compiled for: its backend and arch.
  Target target() const;

  // Program -> CompiledProgram for this device, through the on-disk cache (opkit::build).
  CompiledProgram build(const Program& program) const;
  // CompiledProgram -> Module (also the path for prebuilt binaries).
  Module load(const CompiledProgram& program) const;
  // A prebuilt binary file (a cubin or PTX from `opkit compile -o`, nvcc -cubin, ...) -> Module.
  // Its kernels are named by their symbols (extern "C" names, or mangled C++ names). Throws
  // Error(Errc::not_found) for a missing file, Errc::io when it cannot be read, Errc::load when
  // this device's backend does not take that kind of file or the driver refuses it.
  Module load_file(const std::string& path) const;
  // The same for a binary already in memory (`name` is for messages).
  Module load_binary(std::vector<std::uint8_t> bytes, const std::string& name) const;
  // build + load; the same Program compiled twice in one process compiles once.
  Module compile(const Program& program) const;

  template <class T>
  DeviceBuffer<T> alloc(std::size_t count) const;
  // Stream-ordered: the buffer is for work queued on `stream` (other streams must wait for it),
  // and is freed on that stream when it dies, after the work queued there before. Neither end
  // waits for the GPU (cuMemAllocFromPoolAsync / cuMemFreeAsync on CUDA).
  template <class T>
  DeviceBuffer<T> alloc(std::size_t count, const Stream& stream) const;

  Stream default_stream() const;
  Stream create_stream() const;
  // Wraps a stream created elsewhere (PyTorch, CuPy) without taking ownership.
  Stream borrow_stream(void* native_handle) const;
  Event create_event() const;
  void synchronize() const;

  std::size_t free_memory() const;

  // Byte-level memory interface that DeviceBuffer builds on.
  void* allocate(std::size_t bytes) const;
  void deallocate(void* ptr) const noexcept;
  void* allocate(std::size_t bytes, const Stream& stream) const;
  void deallocate(void* ptr, const Stream& stream) const noexcept;
  // Page-locked ("pinned") host memory for this device's copies (PinnedBuffer owns it): a copy
  // from it on a stream runs by DMA while the host goes on, which a copy from pageable memory does
  // not. The CPU backend's is ordinary memory. Pinning is slow (the driver locks every page): keep
  // such memory and reuse it. A copy from pageable memory on a stream is not safe to reuse the
  // memory after either: see BufferView::copy_from.
  void* allocate_pinned(std::size_t bytes) const;
  void deallocate_pinned(void* ptr) const noexcept;
  void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, const Stream* stream = nullptr) const;
  // Fills `count` elements of `pattern_bytes` (1, 2 or 4) bytes each with the low bytes of pattern.
  void fill(void* dst, std::uint32_t pattern, std::size_t pattern_bytes, std::size_t count,
            const Stream* stream = nullptr) const;

  friend bool operator==(const Device& a, const Device& b) { return a.impl_ == b.impl_; }

 private:
  friend struct detail::DeviceAccess;
  std::shared_ptr<backend::Device> impl_;
};

}  // namespace opkit
