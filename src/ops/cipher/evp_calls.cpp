#include "evp_calls.hpp"

#include <omp.h>
#include <openssl/err.h>

#include <algorithm>
#include <exception>

#include "opkit/error.hpp"

namespace opkit::ops::detail {

const EVP_CIPHER* evp_cipher(Cipher cipher) {
  switch (cipher) {
    case Cipher::aes_128_ctr:
      return EVP_aes_128_ctr();
    case Cipher::aes_192_ctr:
      return EVP_aes_192_ctr();
    case Cipher::aes_256_ctr:
      return EVP_aes_256_ctr();
    case Cipher::aes_128_gcm:
      return EVP_aes_128_gcm();
    case Cipher::aes_192_gcm:
      return EVP_aes_192_gcm();
    case Cipher::aes_256_gcm:
      return EVP_aes_256_gcm();
    case Cipher::chacha20:
      return EVP_chacha20();
    case Cipher::chacha20_poly1305:
      return EVP_chacha20_poly1305();
  }
  return nullptr;
}

[[noreturn]] void evp_fail(const char* call) {
  const unsigned long code = ERR_get_error();
  char text[256] = "no OpenSSL error queued";
  if (code != 0) ERR_error_string_n(code, text, sizeof text);
  ERR_clear_error();
  throw Error(Errc::runtime, call, text);
}

void evp_update(EVP_CIPHER_CTX* ctx, std::uint8_t* out, const std::uint8_t* in, std::size_t bytes) {
  constexpr std::size_t max_update = std::size_t{1} << 30;
  for (std::size_t at = 0; at < bytes; at += max_update) {
    const int n = static_cast<int>(std::min(max_update, bytes - at));
    int written = 0;
    if (EVP_CipherUpdate(ctx, out ? out + at : nullptr, &written, in + at, n) != 1) evp_fail("EVP_CipherUpdate");
  }
}

unsigned worker_count(unsigned threads) {
  return threads != 0 ? threads : static_cast<unsigned>(std::max(1, omp_get_max_threads()));
}

std::size_t range_bytes(std::size_t bytes, std::size_t ranges, std::size_t unit) {
  return ((bytes + ranges - 1) / ranges + unit - 1) / unit * unit;
}

void over_ranges(std::size_t bytes, std::size_t range, const std::function<void(std::size_t, std::size_t)>& body) {
  const std::size_t ranges = (bytes + range - 1) / range;
  std::exception_ptr error;
#pragma omp parallel for num_threads(static_cast <int>(ranges)) schedule(static)
  for (std::size_t r = 0; r < ranges; ++r) {
    const std::size_t at = r * range;
    try {
      body(at, std::min(range, bytes - at));
    } catch (...) {
#pragma omp critical(opkit_cipher_error)
      error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace opkit::ops::detail
