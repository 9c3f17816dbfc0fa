// The parameter-independent half of KernelSet (opkit/kernel_set.hpp): which entry serves a
// backend, device filtering with reasons, and the full-wave launch size.
#include "opkit/kernel_set.hpp"

#include <algorithm>

#include "opkit/backend.hpp"
#include "opkit/error.hpp"
#include "opkit/registry.hpp"

namespace opkit {

std::uint32_t full_wave_blocks(const Kernel& kernel, const LaunchShape& shape) {
  const DeviceInfo& info = kernel.device().info();
  const int units = std::max(1, info.compute_units);
  int per_unit = static_cast<int>(shape.blocks_per_unit);
  if (per_unit == 0 && info.registers_per_unit > 0) {
    // Registers are allocated per warp in units of 8 per thread.
    const int registers = std::max(1, kernel.attributes().registers);
    per_unit = std::clamp(info.registers_per_unit / (((registers + 7) / 8 * 8) * static_cast<int>(shape.block)), 1, 8);
  }
  if (per_unit == 0) per_unit = 4;
  return static_cast<std::uint32_t>(units * per_unit);
}

void KernelSupport::declare(std::string key, bool language) {
  for (const auto& [k, is_language] : keys_)
    if (k == key && is_language == language)
      throw Error(Errc::invalid_argument, "KernelSet", op_ + " declares kernels for '" + key + "' twice");
  keys_.emplace_back(std::move(key), language);
}

int KernelSupport::find(std::string_view backend) const {
  for (std::size_t i = 0; i < keys_.size(); ++i)
    if (!keys_[i].second && keys_[i].first == backend) return static_cast<int>(i);
  const backend::Backend* registered = find_backend(backend);
  if (registered == nullptr) return -1;
  const std::string language = registered->kernel_language();
  for (std::size_t i = 0; i < keys_.size(); ++i)
    if (keys_[i].second && keys_[i].first == language) return static_cast<int>(i);
  return -1;
}

void KernelSupport::require(const Device& device) const {
  index_for(device);
}

int KernelSupport::index_for(const Device& device) const {
  const int index = find(device.backend());
  if (index >= 0) return index;
  std::string declared;
  for (const auto& [key, language] : keys_)
    declared += (declared.empty() ? "" : ", ") + (language ? "backends compiling " + key : key);
  throw Error(Errc::invalid_argument, op_,
              op_ + " has no kernel for the " + device.backend() + " backend (" + device.id() +
                  "); it has kernels for: " + (declared.empty() ? "nothing" : declared));
}

std::vector<Device> KernelSupport::gpus() const {
  std::vector<Device> out;
  for (const Device& device : runnable(Device::all()))
    if (device.is_gpu()) out.push_back(device);
  return out;
}

std::vector<Device> KernelSupport::runnable(const std::vector<Device>& candidates,
                                            std::vector<std::string>* skipped) const {
  std::vector<Device> out;
  for (const Device& device : candidates) {
    if (has(device.backend())) {
      out.push_back(device);
    } else if (skipped != nullptr) {
      skipped->push_back(device.id() + ": " + op_ + " has no kernel for the " + device.backend() + " backend");
    }
  }
  return out;
}

}  // namespace opkit
