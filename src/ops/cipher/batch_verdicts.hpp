// The failing messages of an AEAD batch decryption, from what its kernels leave on the device: a
// verdict byte per message (1: the tag matched) and a failure count that they only add to. The
// count comes back first (8 bytes and one wait, which the call needs anyway to report its verdict);
// the verdicts cross only when it is not zero. ChaCha20-Poly1305 and AES-GCM batches share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/stream.hpp"

namespace opkit::ops::detail {

// The verdict bytes and the failure count (zero before the kernels run) of one decryption.
struct BatchVerdicts {
  BatchVerdicts(const Device& device, std::size_t count, const Stream* stream);

  std::uint8_t* verdicts() { return verdicts_.data(); }
  std::uint64_t* failures() { return failures_.data(); }

  // Waits for the stream; the indices of the messages whose verdict is not 1, in order.
  std::vector<std::size_t> failed(const Stream* stream) const;

 private:
  Device device_;
  std::size_t count_;
  DeviceBuffer<std::uint8_t> verdicts_;
  DeviceBuffer<std::uint64_t> failures_;
};

}  // namespace opkit::ops::detail
