// Where an AEAD encryption writes its tag. Host memory: the call waits for the tag (it is the
// result the caller reads). Device memory of the call's device: nothing waits, every step stays
// queued on the call's stream, so a CUDA graph can capture the call (opkit.torch's AEAD ops).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace opkit::ops::detail {

struct TagOut {
  std::span<std::uint8_t> bytes;  // the tag length is its size
  bool on_device = false;
};

}  // namespace opkit::ops::detail
