// The library's own way from a public Device to its backend object (kept out of the public
// headers, so that users program against opkit::Device alone).
#pragma once

#include <memory>

#include "opkit/backend.hpp"
#include "opkit/device.hpp"

namespace opkit::detail {

struct DeviceAccess {
  static backend::Device& impl(const Device& device) { return *device.impl_; }
  static const std::shared_ptr<backend::Device>& shared_impl(const Device& device) { return device.impl_; }
};

}  // namespace opkit::detail
