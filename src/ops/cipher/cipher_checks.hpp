// Validation shared by every cipher path (host OpenSSL, device kernels): sizes of keys, IVs and
// tags, lengths against the counter space, buffer overlap. Messages name sizes, never key bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "opkit/ops/cipher.hpp"

namespace opkit::ops::detail {

using Bytes = std::span<const std::uint8_t>;
using MutableBytes = std::span<std::uint8_t>;

// The 16-byte IV the implementations take: the CTR counter block, chacha20's OpenSSL form
// (counter || nonce), or for chacha20-poly1305 (counter 0) || nonce. GCM keeps its own nonce.
using Iv16 = std::array<std::uint8_t, 16>;

// Throws invalid_argument unless key, IV and tag sizes fit the cipher and `bytes` fits the
// counter space from the IV on. Returns the IV in 16-byte form (unused for GCM).
Iv16 check_message(Cipher cipher, std::size_t key_bytes, Bytes iv, std::size_t tag_bytes, std::uint64_t bytes,
                   std::uint32_t chacha20_counter, const char* stage);

// Throws unless out is exactly in or does not overlap it, and both have the same size.
void check_in_out(const void* in, std::size_t in_bytes, const void* out, std::size_t out_bytes, const char* stage);

// Where message i of a batch lies in its data: [begin(i), end(i)). A fixed-length batch keeps no
// table (10^6 messages would be 8 MB built, faulted in and freed per call); a variable one keeps
// this call's own copy of the offsets (a call that returns before the device reads them must not
// depend on the caller's).
class BatchBounds {
 public:
  BatchBounds(std::size_t count, std::uint64_t fixed_bytes) : count_(count), fixed_(fixed_bytes) {}
  explicit BatchBounds(std::vector<std::uint64_t> offsets)
      : count_(offsets.empty() ? 0 : offsets.size() - 1), offsets_(std::move(offsets)) {}

  std::size_t count() const noexcept { return count_; }
  bool fixed() const noexcept { return offsets_.empty(); }
  std::uint64_t fixed_bytes() const noexcept { return fixed_; }
  std::uint64_t begin(std::size_t i) const noexcept { return offsets_.empty() ? i * fixed_ : offsets_[i]; }
  std::uint64_t end(std::size_t i) const noexcept { return begin(i + 1); }
  std::uint64_t size(std::size_t i) const noexcept { return end(i) - begin(i); }
  std::uint64_t total() const noexcept { return begin(count_); }
  // The offsets (count + 1) of a variable-length batch; empty for a fixed one.
  std::span<const std::uint64_t> offsets() const noexcept { return offsets_; }

 private:
  std::size_t count_ = 0;
  std::uint64_t fixed_ = 0;
  std::vector<std::uint64_t> offsets_;
};

// The batch's message bounds, checked against data_bytes.
BatchBounds batch_offsets(const CipherBatch& batch, std::size_t data_bytes, const char* stage);

// The 16-byte IV form of `iv` (check_message's result, without its checks).
Iv16 iv16(Cipher cipher, Bytes iv, std::uint32_t chacha20_counter);

struct CheckedBatch {
  std::size_t tag_bytes = 0;
  Cipher cipher = Cipher::aes_128_ctr;
  Bytes ivs;  // the caller's host IVs, iv_bytes each (empty for device IVs)
  std::size_t iv_bytes = 0;
  std::uint32_t chacha20_counter = 0;
  // chacha20 with 16-byte IVs in device memory: the host checked every length against the whole
  // counter space only; each IV's own counter word is still to be checked on the device
  // (check_chacha20_counters_on_device) before the cipher runs.
  bool counters_on_device = false;
  // Message i's IV as check_message returns it (computed on demand: no per-message table; host
  // IVs only).
  Iv16 iv(std::size_t i) const { return iv16(cipher, ivs.subspan(i * iv_bytes, iv_bytes), chacha20_counter); }
};

// Checks keys, IVs, AAD offsets and the tag buffer of a batch: every message as check_message
// would, but without a call (or a table) per message where the answer cannot differ. Host and
// device forms of keys, IVs and AAD alike (sizes, and exactly one form of each); the contents of
// device IVs are not read here (see CheckedBatch::counters_on_device).
CheckedBatch check_batch(Cipher cipher, const CipherBatch& batch, const BatchBounds& bounds, std::size_t tags_bytes,
                         std::uint32_t chacha20_counter, const char* stage);

// Throws unless the batch's device keys, IVs and AAD live on `data_device`, the device of the
// data; with host data (data_device nullptr) unless the batch has none.
void check_batch_devices(const CipherBatch& batch, const Device* data_device, const char* stage);

}  // namespace opkit::ops::detail
