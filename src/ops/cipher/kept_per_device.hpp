// Things of a device that cost more to make than a call spends using them (pinned host memory,
// streams), kept between calls for the next call to take: a few a device, the one given back
// most recently taken first, the one given back longest ago dropped beyond MaxKept. The pools are
// made once and never destroyed: no driver call runs during static destruction, and the process's
// exit releases what they hold.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "opkit/device.hpp"

namespace opkit::ops::detail {

template <class T, std::size_t MaxKept>
class KeptPerDevice {
 public:
  // A kept T of `device` for which fits(t) holds, if any.
  template <class Fits>
  std::optional<T> take(const Device& device, Fits&& fits) {
    const std::lock_guard lock(mutex_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->device() == device && fits(*it)) {
        std::optional<T> taken(std::move(*it));
        kept_.erase(it);
        return taken;
      }
    }
    return std::nullopt;
  }

  void give_back(T item) {
    std::optional<T> dropped;  // destroyed after the lock is released
    const Device device = item.device();
    const std::lock_guard lock(mutex_);
    kept_.insert(kept_.begin(), std::move(item));
    std::size_t same = 0;
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->device() == device && ++same > MaxKept) {
        dropped.emplace(std::move(*it));
        kept_.erase(it);
        break;
      }
    }
  }

 private:
  std::mutex mutex_;
  std::vector<T> kept_;
};

}  // namespace opkit::ops::detail
