// Validation shared by every cipher path (host OpenSSL, device kernels): sizes of keys, IVs and
// tags, lengths against the counter space, buffer overlap. Messages name sizes, never key bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
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

// The batch's message bounds as offsets (count + 1 of them), checked against data_bytes.
std::vector<std::uint64_t> batch_offsets(const CipherBatch& batch, std::size_t data_bytes, const char* stage);

struct CheckedBatch {
  std::size_t tag_bytes = 0;
  std::vector<Iv16> ivs;  // per message, as check_message returns them
};

// Checks keys, IVs, AAD offsets and the tag buffer of a batch.
CheckedBatch check_batch(Cipher cipher, const CipherBatch& batch, std::span<const std::uint64_t> offsets,
                         std::size_t tags_bytes, std::uint32_t chacha20_counter, const char* stage);

}  // namespace opkit::ops::detail
