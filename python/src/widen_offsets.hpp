// 32-bit offsets on a GPU widened to the 64-bit ones the SHA-256 operator takes, on the device.
// JAX makes 32-bit integers unless jax_enable_x64 is set (asking it for int64 silently gives
// int32), so without this its users could not pass offsets for data on a GPU at all.
#pragma once

#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/stream.hpp"

namespace opkit::python {

// A new device buffer of offsets.size() 64-bit offsets: each 32-bit one sign-extended if
// `is_signed` (a negative offset then reads as one past the end of the data, which the operator
// reports by message index), zero-extended otherwise. Queued on `stream` (nullptr: the device's
// default stream), before the work that reads it.
DeviceBuffer<std::uint64_t> widen_offsets(const Device& gpu, BufferView<const std::uint32_t> offsets, bool is_signed,
                                          const Stream* stream);

}  // namespace opkit::python
