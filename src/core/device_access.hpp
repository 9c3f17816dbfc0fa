// The library's own way from a public Device or Stream to its backend object (kept out of the
// public headers, so that users program against opkit::Device and opkit::Stream alone).
#pragma once

#include <memory>

#include "opkit/backend.hpp"
#include "opkit/device.hpp"
#include "opkit/stream.hpp"

namespace opkit::detail {

struct DeviceAccess {
  static backend::Device& impl(const Device& device) { return *device.impl_; }
  static const std::shared_ptr<backend::Device>& shared_impl(const Device& device) { return device.impl_; }
  static backend::Stream& impl(const Stream& stream) { return *stream.impl_; }
};

}  // namespace opkit::detail
