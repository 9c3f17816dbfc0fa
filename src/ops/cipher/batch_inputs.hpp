// A batch's keys, IVs, AAD and AAD offsets where its kernels read them: the caller's device memory
// in place (CipherBatch::device_keys, device_ivs, device_aad), or device copies of this call's own.
// The AES and ChaCha20 batch paths both take their kernel pointers from here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "device_secret.hpp"
#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/ops/cipher.hpp"
#include "opkit/stream.hpp"

namespace opkit::ops::detail {

// What a batch path's kernels read, and whether the call waits for its work before it returns.
struct BatchInputNeeds {
  std::size_t word_bytes = 1;  // alignment of the kernels' key and IV loads (ChaCha20: 4-byte words)
  bool aad = false;            // the kernels read AAD (the AEADs)
  bool call_waits = true;      // the call waits for its work before it returns
};

// Host keys, IVs and AAD go into one DeviceSecret, zeroed behind the kernels: copied straight from
// the caller's memory when the call waits for its work, else staged (DeviceSecret::upload), so
// that the caller may reuse its memory, even pinned, as soon as the call returns. The caller's
// device memory is read in place: no host copy, no staging, no wait, and not wiped (it is the
// caller's). Device memory the kernels cannot read in place (not aligned to word_bytes) is
// copied on the device into the secret first. The sizes and devices are checked already
// (check_batch, check_batch_devices).
class BatchInputs {
 public:
  BatchInputs(const Device& device, const CipherBatch& batch, const BatchInputNeeds& needs, const Stream* stream);

  BufferView<const std::uint8_t> keys() const { return view(keys_); }
  BufferView<const std::uint8_t> ivs() const { return view(ivs_); }
  // The whole AAD (empty without AAD or when needs.aad is false).
  BufferView<const std::uint8_t> aad() const { return view(aad_); }
  // The AAD offsets (count + 1) on the device; nullptr without AAD.
  const std::uint64_t* aad_offsets() const { return aad_offsets_ ? aad_offsets_->data() : nullptr; }

 private:
  struct Placed {
    const std::uint8_t* data = nullptr;
    std::size_t size = 0;
  };
  BufferView<const std::uint8_t> view(const Placed& placed) const {
    return BufferView<const std::uint8_t>(device_, placed.data, placed.size);
  }

  Device device_;
  std::optional<DeviceSecret> copies_;
  std::optional<DeviceBuffer<std::uint64_t>> aad_offsets_;
  Placed keys_, ivs_, aad_;
};

}  // namespace opkit::ops::detail
