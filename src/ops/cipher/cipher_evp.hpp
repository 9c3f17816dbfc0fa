// The host CPU path: OpenSSL EVP (AES-NI / VAES / SIMD ChaCha20 where the CPU has them), bulk
// CTR and ChaCha20 split into counter ranges over the cores, batches spread message by message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cipher_checks.hpp"

namespace opkit::ops::detail {

// One message, sequentially. iv: the GCM nonce, else the 16-byte form (chacha20-poly1305: its
// last 12 bytes). Encryption writes `tag_bytes` of tag; decryption checks them and on a mismatch
// zeroes out and returns false.
bool evp_message(Cipher cipher, bool encrypt, Bytes key, Bytes iv, Bytes aad, const std::uint8_t* in, std::uint8_t* out,
                 std::size_t bytes, std::uint8_t* tag, std::size_t tag_bytes);

// One message over up to `threads` cores (0: all). AEADs run on one core: EVP's GHASH and
// Poly1305 are sequential.
bool evp_bulk(Cipher cipher, bool encrypt, Bytes key, Bytes iv, Bytes aad, const std::uint8_t* in, std::uint8_t* out,
              std::size_t bytes, std::uint8_t* tag, std::size_t tag_bytes, unsigned threads);

// A checked batch; returns the indices whose tags failed (their output zeroed).
std::vector<std::size_t> evp_batch(Cipher cipher, bool encrypt, const CipherBatch& batch,
                                   const std::vector<std::uint64_t>& offsets, const CheckedBatch& checked,
                                   const std::uint8_t* in, std::uint8_t* out, std::uint8_t* tags, unsigned threads);

}  // namespace opkit::ops::detail
