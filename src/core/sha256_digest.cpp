// Host-side SHA-256 through OpenSSL's EVP interface.
#include "sha256_digest.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "opkit/error.hpp"

namespace opkit::detail {

void init_openssl() {
  // OPENSSL_INIT_NO_ATEXIT: by default OpenSSL frees its state from an atexit handler registered
  // at its first use, and a background kernel compile still hashing its cache entry at exit (they
  // are waited for from a static destructor, see kernel_miner.cpp) then crashed in EVP_Digest.
  // When another library initialised OpenSSL first, its handler was registered before ours and
  // runs after that wait, which is safe too.
  static const bool initialised = OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr) == 1;
  if (!initialised) throw Error(Errc::unavailable, "OPENSSL_init_crypto", "OpenSSL failed to initialise");
}

std::array<std::uint8_t, 32> sha256_digest(std::string_view bytes) {
  init_openssl();
  std::array<std::uint8_t, 32> out{};
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), out.data(), &size, EVP_sha256(), nullptr) != 1 || size != out.size())
    throw Error(Errc::unavailable, "EVP_Digest", "OpenSSL could not compute a SHA-256 digest");
  return out;
}

std::string to_hex(const std::uint8_t* data, std::size_t size) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex(size * 2, '0');
  for (std::size_t i = 0; i < size; ++i) {
    hex[2 * i] = digits[data[i] >> 4];
    hex[2 * i + 1] = digits[data[i] & 15];
  }
  return hex;
}

}  // namespace opkit::detail
