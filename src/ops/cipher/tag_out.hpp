// Where an AEAD call's tags are. TagOut, an encryption's: host memory, the call waits for the tag
// (it is the result the caller reads); device memory of the call's device, nothing waits, every
// step stays queued on the call's stream, so a CUDA graph can capture the call (opkit.torch's AEAD
// ops). TagIn, a batch decryption's expected tags: host memory, uploaded once by the call; device
// memory of the call's device, read there in place by the kernels that compare them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace opkit::ops::detail {

struct TagOut {
  std::span<std::uint8_t> bytes;  // the tag length is its size
  bool on_device = false;
};

struct TagIn {
  std::span<const std::uint8_t> bytes;  // tag_bytes per message
  bool on_device = false;
};

}  // namespace opkit::ops::detail
