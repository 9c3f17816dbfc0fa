// Kernel: one __global__ function of a loaded Module, and its typed launch. A Kernel keeps its
// module (and so its device) alive, so copies never dangle.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "opkit/buffer.hpp"
#include "opkit/stream.hpp"

namespace opkit {

namespace backend {
class Function;
class Stream;
}  // namespace backend

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  constexpr Dim3(std::uint32_t x_ = 1, std::uint32_t y_ = 1, std::uint32_t z_ = 1)  // NOLINT: Dim3 d = 256;
      : x(x_), y(y_), z(z_) {}
  constexpr std::uint64_t count() const { return std::uint64_t{x} * y * z; }
};

struct LaunchConfig {
  Dim3 grid = 1;
  Dim3 block = 1;
  std::uint32_t shared_bytes = 0;  // dynamic shared memory
  const Stream* stream = nullptr;  // nullptr: the device's default stream
};

// A module-scope variable of a loaded Module (Module::global).
struct GlobalVariable {
  void* address = nullptr;  // device memory, for Device::copy and kernels
  std::size_t bytes = 0;
};

struct KernelAttributes {
  int max_threads_per_block = 0;
  int registers = 0;  // per thread
  int static_shared_bytes = 0;
  int local_bytes = 0;  // per-thread stack / spill
};

class Kernel {
 public:
  Kernel(Device device, std::shared_ptr<backend::Function> impl, std::string name);

  // Launches with typed arguments. DeviceBuffer / BufferView become device pointers (a const
  // DeviceBuffer a const T*); everything else is passed by value and must be trivially copyable.
  // Where the backend knows the kernel's parameter list, the argument count and sizes are checked
  // against it.
  template <class... Args>
  void launch(const LaunchConfig& config, Args&&... args) const {
    auto converted = std::make_tuple(LaunchArg<std::remove_cvref_t<Args>>::convert(args)...);
    static_assert(
        (std::is_trivially_copyable_v<std::decay_t<decltype(LaunchArg<std::remove_cvref_t<Args>>::convert(args))>> &&
         ...),
        "kernel arguments must be trivially copyable (pass buffers, pointers or plain structs)");
    launch_tuple(config, converted, std::index_sequence_for<Args...>{});
  }

  // The untyped path: args[i] points at the value of parameter i, sizes[i] is its size.
  void launch_packed(const LaunchConfig& config, void** args, const std::size_t* sizes, std::size_t count) const;

  const std::string& name() const noexcept { return name_; }
  const Device& device() const noexcept { return device_; }
  KernelAttributes attributes() const;
  // A hint for GPUs whose L1 cache and shared memory share one store per SM: make the shared part
  // just large enough for blocks_per_unit resident blocks of this kernel (its static shared
  // memory and the GPU's reservation per block), so that the rest stays L1 cache. The driver
  // picks the carve-out for the most resident blocks otherwise, which for a grid that never
  // fills them all leaves shared memory unused and L1 small (lz4_compress.cu). The GPU rounds up
  // to a size it supports; the hint holds for later launches on every stream. No effect on
  // backends without that split (the CPU backend).
  void carve_shared_memory_for(unsigned blocks_per_unit) const;

 private:
  template <class Tuple, std::size_t... I>
  void launch_tuple(const LaunchConfig& config, Tuple& values, std::index_sequence<I...>) const {
    constexpr std::size_t count = sizeof...(I);
    std::array<void*, count + 1> pointers{const_cast<void*>(static_cast<const void*>(&std::get<I>(values)))...};
    // NOLINTNEXTLINE(bugprone-sizeof-expression): a buffer argument is a pointer, and its size is wanted
    std::array<std::size_t, count + 1> sizes{sizeof(std::tuple_element_t<I, Tuple>)...};
    launch_packed(config, pointers.data(), sizes.data(), count);
  }

  Device device_;
  std::shared_ptr<backend::Function> impl_;
  std::string name_;
  // Looked up once here so that a launch costs no allocation and no extra virtual call.
  std::shared_ptr<backend::Stream> default_stream_;
  bool params_known_ = false;
  std::vector<std::size_t> param_sizes_;
};

}  // namespace opkit
