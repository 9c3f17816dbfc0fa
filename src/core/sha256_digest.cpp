// Host-side SHA-256 through OpenSSL's EVP interface.
#include "core/sha256_digest.hpp"

#include <openssl/evp.h>

namespace opkit::detail {

std::array<std::uint8_t, 32> sha256_digest(std::string_view bytes) {
  std::array<std::uint8_t, 32> out{};
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), out.data(), &size, EVP_sha256(), nullptr);
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
