// Cipher names and sizes, and the authentication error.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "opkit/ops/cipher.hpp"

namespace opkit::ops {
namespace {

constexpr std::array<Cipher, 8> ciphers = {Cipher::aes_128_ctr, Cipher::aes_192_ctr,      Cipher::aes_256_ctr,
                                           Cipher::aes_128_gcm, Cipher::aes_192_gcm,      Cipher::aes_256_gcm,
                                           Cipher::chacha20,    Cipher::chacha20_poly1305};

constexpr std::array<CipherTraits, 8> traits = {{
    {"aes-128-ctr", 16, 16, false},
    {"aes-192-ctr", 24, 16, false},
    {"aes-256-ctr", 32, 16, false},
    {"aes-128-gcm", 16, 16, true},
    {"aes-192-gcm", 24, 16, true},
    {"aes-256-gcm", 32, 16, true},
    {"chacha20", 32, 64, false},
    {"chacha20-poly1305", 32, 64, true},
}};

std::string message_for(const std::vector<std::size_t>& failed) {
  if (failed.size() <= 1) return "authentication failed: the tag does not match (output zeroed)";
  std::string text = "authentication failed for " + std::to_string(failed.size()) + " messages (";
  for (std::size_t i = 0; i < failed.size() && i < 8; ++i) text += (i ? ", " : "") + std::to_string(failed[i]);
  return text + (failed.size() > 8 ? ", ...)" : ")") + "; their output is zeroed";
}

}  // namespace

const CipherTraits& cipher_traits(Cipher cipher) noexcept {
  return traits[static_cast<std::size_t>(cipher)];
}

std::optional<Cipher> cipher_from_name(std::string_view name) noexcept {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (Cipher c : ciphers)
    if (cipher_traits(c).name == lower) return c;
  return std::nullopt;
}

std::span<const Cipher> all_ciphers() noexcept {
  return ciphers;
}

std::array<std::uint8_t, 16> keystream_iv_at(Cipher cipher, std::span<const std::uint8_t, 16> iv, std::uint64_t block) {
  std::array<std::uint8_t, 16> out{};
  std::copy(iv.begin(), iv.end(), out.begin());
  if (cipher == Cipher::chacha20) {  // little-endian 32-bit counter in the first word
    std::uint32_t c =
        std::uint32_t{iv[0]} | std::uint32_t{iv[1]} << 8 | std::uint32_t{iv[2]} << 16 | std::uint32_t{iv[3]} << 24;
    c += static_cast<std::uint32_t>(block);
    for (int i = 0; i < 4; ++i) out[i] = static_cast<std::uint8_t>(c >> (8 * i));
    return out;
  }
  unsigned carry = 0;  // big-endian 128-bit counter block
  for (int i = 15; i >= 0; --i) {
    const unsigned sum = out[i] + static_cast<unsigned>(block & 0xff) + carry;
    out[i] = static_cast<std::uint8_t>(sum);
    carry = sum >> 8;
    block >>= 8;
  }
  return out;
}

AuthenticationError::AuthenticationError(std::vector<std::size_t> failed_indices)
    : Error(Errc::invalid_argument, "decrypt", message_for(failed_indices)), failed_(std::move(failed_indices)) {}

}  // namespace opkit::ops
