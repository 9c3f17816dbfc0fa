// KernelMemo: an operator's built kernels per (device, program parameters), as CuPy keeps a
// per-device kernel cache: a call with parameters seen before reuses the Kernel without building
// its program or hashing its source. Bounded (least recently used out first), since parameters
// such as a message length are unbounded; a memoised Kernel keeps its module loaded.
#pragma once

#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

#include "core/lru_map.hpp"
#include "opkit/device.hpp"
#include "opkit/kernel.hpp"

namespace opkit::detail {

// Params: a cheap, ordered value naming everything the program depends on (a tuple of ints).
template <class Params>
class KernelMemo {
 public:
  explicit KernelMemo(std::size_t capacity) : kernels_(capacity) {}

  // The kernel for (device, params): memoised, or make() (which returns a Kernel) remembered.
  // make() runs without the lock; its errors propagate and are not remembered.
  template <class Make>
  Kernel get(const Device& device, const Params& params, Make&& make) {
    Key key{&device.impl(), params};
    {
      std::lock_guard lock(mutex_);
      if (Kernel* hit = kernels_.find(key)) return *hit;
    }
    Kernel made = make();
    std::vector<Kernel> evicted;  // released after the lock: the last of a module unloads it
    std::lock_guard lock(mutex_);
    ++builds_;
    return kernels_.insert(key, std::move(made), evicted);
  }

  // How many times get() called make() (for tests: a repeated call must not build).
  std::size_t builds() const {
    std::lock_guard lock(mutex_);
    return builds_;
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return kernels_.size();
  }

 private:
  // The device pointer stays valid while the entry lives: the Kernel holds its Device.
  using Key = std::pair<const backend::Device*, Params>;
  mutable std::mutex mutex_;
  LruMap<Key, Kernel> kernels_;
  std::size_t builds_ = 0;
};

}  // namespace opkit::detail
