// The host CPU path: OpenSSL EVP (AES-NI / VAES / SIMD ChaCha20 where the CPU has them), bulk
// messages split into counter ranges over the cores (the AEADs' authenticators as
// cipher_evp_aead.cpp says), batches spread message by message.
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

// One message over up to `threads` cores (0: all), in ranges of at least 1 MiB.
bool evp_bulk(Cipher cipher, bool encrypt, Bytes key, Bytes iv, Bytes aad, const std::uint8_t* in, std::uint8_t* out,
              std::size_t bytes, std::uint8_t* tag, std::size_t tag_bytes, unsigned threads);

// An AEAD message over `ranges` cores: GCM with a 96-bit nonce has its keystream and GHASH split
// into ranges (other nonce lengths: one core); ChaCha20-Poly1305 its keystream, with Poly1305 in
// one pass. Decryption verifies the tag before it writes any plaintext; a mismatch zeroes out.
bool evp_aead_over_cores(Cipher cipher, bool encrypt, Bytes key, Bytes iv, Bytes aad, const std::uint8_t* in,
                         std::uint8_t* out, std::size_t bytes, std::uint8_t* tag, std::size_t tag_bytes,
                         std::size_t ranges);

// A checked batch; returns the indices whose tags failed (their output zeroed).
std::vector<std::size_t> evp_batch(Cipher cipher, bool encrypt, const CipherBatch& batch, const BatchBounds& bounds,
                                   const CheckedBatch& checked, const std::uint8_t* in, std::uint8_t* out,
                                   std::uint8_t* tags, unsigned threads);

}  // namespace opkit::ops::detail
