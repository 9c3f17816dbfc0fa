// KernelSet: what an operator runs on each backend. The operator declares, per backend name (or
// per kernel language, for every backend that compiles that language), the factory that makes
// its Program from the call's parameters and the launch shape it uses there. The set then
//   - answers has(backend), which drives device choice: a device whose backend has no kernel for
//     the operator is skipped with a reason, and asking for one explicitly is an Error naming the
//     operator and the backend, never a silent fallback;
//   - compiles each (device, parameters) once and hands the same Kernel back afterwards (as CuPy's
//     per-device kernel cache does), so that a call costs no source rebuild and no re-hash.
//
//   struct Params { int length; auto operator<=>(const Params&) const = default; };
//   static const auto& kernels = *new KernelSet<Params>("my_op");   // lives for the process
//   ...add_language("cuda", {[](const Params& p) { return Program(src).define("LEN", p.length); }});
//   Kernel k = kernels.kernel(device, {64}, "my_kernel");
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "opkit/device.hpp"
#include "opkit/kernel.hpp"
#include "opkit/module.hpp"
#include "opkit/program.hpp"

namespace opkit {

// How an operator launches its kernel on one backend.
struct LaunchShape {
  unsigned block = 256;  // threads per block
  // Resident blocks per compute unit in a full wave. 0: as many as the kernel's registers allow
  // on a device with a register file (DeviceInfo::registers_per_unit), at most 8; else 4.
  unsigned blocks_per_unit = 0;
};

// Blocks of `shape.block` threads in one full wave of `kernel` on its device.
std::uint32_t full_wave_blocks(const Kernel& kernel, const LaunchShape& shape);

// What every KernelSet answers without its parameter type: where the operator runs.
class KernelSupport {
 public:
  const std::string& op() const noexcept { return op_; }
  // Whether the operator has a kernel for this backend (by name, else by its kernel language).
  bool has(std::string_view backend) const { return find(backend) >= 0; }
  // The candidates this operator runs on, in order; each skipped one adds a line to `skipped`.
  std::vector<Device> runnable(const std::vector<Device>& candidates,
                               std::vector<std::string>* skipped = nullptr) const;
  // The automatic choice of devices: every GPU of Device::all() that the operator has kernels for.
  std::vector<Device> gpus() const;
  // Throws Error(invalid_argument) naming the operator and the device's backend when it has no kernel there.
  void require(const Device& device) const;

 protected:
  explicit KernelSupport(std::string op) : op_(std::move(op)) {}
  void declare(std::string key, bool language);
  // Index of the entry serving `backend`: its own name first, then its kernel language; -1 if none.
  int find(std::string_view backend) const;
  int index_for(const Device& device) const;  // find(), or the Error of require()

 private:
  std::string op_;
  std::vector<std::pair<std::string, bool>> keys_;  // backend name or language, and which
};

template <class Params>
class KernelSet : public KernelSupport {
 public:
  using Factory = std::function<Program(const Params&)>;
  struct Kernels {
    Factory program;
    LaunchShape shape = {};
  };

  explicit KernelSet(std::string op) : KernelSupport(std::move(op)) {}

  // Kernels for the backend of this name.
  KernelSet& add(std::string backend, Kernels kernels) { return put(std::move(backend), false, std::move(kernels)); }
  // Kernels for every backend whose kernel_language() is `language` ("cuda": CUDA C++), unless
  // the backend has an entry of its own.
  KernelSet& add_language(std::string language, Kernels kernels) {
    return put(std::move(language), true, std::move(kernels));
  }

  // What the operator has on the device's backend; Error(invalid_argument) when nothing.
  const Kernels& on(const Device& device) const { return entries_[static_cast<std::size_t>(index_for(device))]; }
  Program program(const Device& device, const Params& params) const { return on(device).program(params); }

  // Kernel `name` of the device's program for `params`, compiled once per (device, params, name).
  // At most max_cached kernels are kept; a full set starts afresh (a kernel handed out stays valid).
  Kernel kernel(const Device& device, const Params& params, std::string_view name) const {
    Key key{device.id(), params, std::string(name)};
    {
      std::lock_guard lock(mutex_);
      if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    }
    Kernel kernel = device.compile(program(device, params)).kernel(name);  // outside the lock
    std::lock_guard lock(mutex_);
    if (cache_.size() >= max_cached) cache_.clear();
    return cache_.try_emplace(std::move(key), std::move(kernel)).first->second;
  }

  static constexpr std::size_t max_cached = 64;

 private:
  using Key = std::tuple<std::string, Params, std::string>;

  KernelSet& put(std::string key, bool language, Kernels kernels) {
    declare(std::move(key), language);
    entries_.push_back(std::move(kernels));
    return *this;
  }

  std::vector<Kernels> entries_;  // parallel to the declared keys
  mutable std::mutex mutex_;
  mutable std::map<Key, Kernel> cache_;
};

}  // namespace opkit
