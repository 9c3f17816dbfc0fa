// The OpenSSL EVP calls the host cipher path is made of (cipher_evp.cpp, cipher_evp_aead.cpp):
// the EVP cipher of each opkit cipher, errors as opkit::Error, updates of any length.
#pragma once

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "opkit/ops/cipher.hpp"

namespace opkit::ops::detail {

const EVP_CIPHER* evp_cipher(Cipher cipher);

inline bool is_gcm(Cipher c) {
  return c == Cipher::aes_128_gcm || c == Cipher::aes_192_gcm || c == Cipher::aes_256_gcm;
}

// Throws Error(runtime) naming the call and OpenSSL's queued error (which it clears).
[[noreturn]] void evp_fail(const char* call);

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;  // free cleanses the key

// EVP_CipherUpdate over any length (EVP takes int lengths: at most 1 GiB per call, so pieces
// stay whole blocks). out == nullptr feeds AAD.
void evp_update(EVP_CIPHER_CTX* ctx, std::uint8_t* out, const std::uint8_t* in, std::size_t bytes);

// Threads for a parallel region: `threads`, or OpenMP's default (all cores) for 0.
unsigned worker_count(unsigned threads);

// The bytes per range when `bytes` are split into `ranges` of whole `unit`s: ceil(bytes /
// ranges) rounded up to a unit, so that the ranges cover every byte (bytes / ranges would drop
// the tail whenever it is already a whole number of units).
std::size_t range_bytes(std::size_t bytes, std::size_t ranges, std::size_t unit);

// body(at, n) for each range [at, at + n) of `range` bytes covering `bytes`, one thread per
// range; rethrows a body's exception once every range has ended.
void over_ranges(std::size_t bytes, std::size_t range, const std::function<void(std::size_t, std::size_t)>& body);

}  // namespace opkit::ops::detail
