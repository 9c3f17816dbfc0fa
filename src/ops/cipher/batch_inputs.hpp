// A batch's keys, IVs, AAD and AAD offsets, and a decryption's expected tags, where its kernels
// read them: the caller's device memory in place (CipherBatch::device_keys, device_ivs, device_aad;
// device tags are the caller's to pass), or device copies of this call's own.
// The AES and ChaCha20 batch paths both take their kernel pointers from here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "device_secret.hpp"
#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/ops/cipher.hpp"
#include "opkit/stream.hpp"
#include "pinned_ring.hpp"
#include "stage_sizes.hpp"

namespace opkit::ops::detail {

// What a batch path's kernels read, and whether the call waits for its work before it returns.
struct BatchInputNeeds {
  std::size_t word_bytes = 1;  // alignment of the kernels' key and IV loads (ChaCha20: 4-byte words)
  bool aad = false;            // the kernels read AAD (the AEADs)
  // The tags a decryption checks, when they are host memory: count x tag bytes, staged as the keys
  // are (a large batch's in chunks through pinned memory, beside its keys; else one direct copy,
  // since a decryption waits for its verdicts). Empty: none, or the caller's device memory.
  std::span<const std::uint8_t> expected_tags = {};
  bool call_waits = true;  // the call waits for its work before it returns
};

// Host keys, IVs and AAD go into one DeviceSecret, zeroed behind the kernels. The caller may reuse
// its host memory, even pinned, as soon as the call returns:
// - A batch of at most one chunk (StageSizes::chunk_messages) copies them straight from the
//   caller's memory when the call waits for its work, else stages them (DeviceSecret::upload).
// - A larger batch streams them in chunks of messages through pinned staging memory
//   (PinnedRing) on a stream of its own, so that the upload of chunk i + 1 overlaps the kernels of
//   chunk i: the batch path asks for each range of messages before its kernels read it
//   (require), and the call's stream waits for that range's copies (an event), not for the
//   host. The call waits for its own copies (not for its kernels, nor for earlier work on its
//   stream) before it returns (finish_uploads, or the destructor), and the pinned copies of the
//   keys are wiped then. The secret lives on the staging stream, which waits for the call's
//   stream before zeroing and freeing it.
// The caller's device memory is read in place: no host copy, no staging, no wait, and not wiped
// (it is the caller's). Device memory the kernels cannot read in place (not aligned to
// word_bytes) is copied on the device into the secret first. The sizes and devices are checked
// already (check_batch, check_batch_devices).
class BatchInputs {
 public:
  BatchInputs(const Device& device, const CipherBatch& batch, const BatchInputNeeds& needs, const Stream* stream);
  ~BatchInputs();
  BatchInputs(const BatchInputs&) = delete;
  BatchInputs& operator=(const BatchInputs&) = delete;

  BufferView<const std::uint8_t> keys() const { return view(keys_); }
  BufferView<const std::uint8_t> ivs() const { return view(ivs_); }
  // The expected tags of needs.expected_tags on the device (empty when none were given).
  BufferView<const std::uint8_t> expected_tags() const { return view(tags_); }
  // The whole AAD (empty without AAD or when needs.aad is false).
  BufferView<const std::uint8_t> aad() const { return view(aad_); }
  // The AAD offsets (count + 1) on the device; nullptr without AAD.
  const std::uint64_t* aad_offsets() const { return aad_offsets_; }

  // The messages a launch should take at most, for the upload of the next ones to overlap it:
  // the chunk size when the inputs are streamed, else the whole batch.
  std::size_t chunk_messages() const noexcept { return chunk_; }
  // Makes the inputs of messages [first, first + count) readable by work queued on `on` (the
  // call's stream, or one that joins it before the call's work ends) from now on: uploads the
  // chunks up to them not yet uploaded and has `on` wait for their copies. Nothing to do unless
  // the inputs are streamed.
  void require(std::size_t first, std::size_t count, const Stream& on);
  // Waits for the uploads and wipes their pinned staging; for when the last kernels are queued.
  void finish_uploads();

 private:
  struct Placed {
    const std::uint8_t* data = nullptr;
    std::size_t size = 0;
  };
  // A host input streamed chunk by chunk: message i's `width` bytes at i * width (AAD: by offsets).
  struct Streamed {
    std::span<const std::uint8_t> host;
    std::uint8_t* device = nullptr;
    std::size_t width = 0;
  };
  BufferView<const std::uint8_t> view(const Placed& placed) const {
    return BufferView<const std::uint8_t>(device_, placed.data, placed.size);
  }
  void place(const CipherBatch& batch, const BatchInputNeeds& needs, const Stream* stream);
  void upload_next_chunk();

  Device device_;
  const Stream* stream_;
  std::size_t count_;
  std::size_t chunk_;
  // Streamed inputs only. The ring is declared before the secret, so that the secret's zeroing
  // and free are queued on the ring's stream before it goes.
  std::optional<PinnedRing> ring_;
  std::optional<DeviceSecret> copies_;
  std::optional<DeviceBuffer<std::uint64_t>> aad_offsets_scratch_;
  Placed keys_, ivs_, aad_, tags_;
  const std::uint64_t* aad_offsets_ = nullptr;
  Streamed streamed_keys_, streamed_ivs_, streamed_aad_, streamed_tags_;
  std::span<const std::uint64_t> host_aad_offsets_;  // streamed to streamed_aad_offsets_ (= aad_offsets_)
  std::uint8_t* streamed_aad_offsets_ = nullptr;
  std::size_t uploaded_ = 0;  // messages whose inputs are queued for upload
};

}  // namespace opkit::ops::detail
