// Targets: Bitcoin's compact nBits, 64-digit hex, leading-zero bits; and the hash comparisons.
#include <algorithm>
#include <cstdio>

#include "opkit/error.hpp"
#include "opkit/hex.hpp"
#include "opkit/ops/pow.hpp"

namespace opkit::ops {
namespace {

std::string nbits_text(std::uint32_t nbits) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", nbits);
  return text;
}

bool is_zero(const Target& t) {
  return std::all_of(t.bytes.begin(), t.bytes.end(), [](std::uint8_t b) { return b == 0; });
}

}  // namespace

// As Bitcoin Core's arith_uint256::SetCompact, except that what it flags (negative, overflow)
// and a zero target are errors here: none of them can be mined.
Target Target::from_compact(std::uint32_t nbits) {
  const int exponent = static_cast<int>(nbits >> 24);
  std::uint32_t mantissa = nbits & 0x007fffffu;
  if (mantissa != 0 && (nbits & 0x00800000u))
    throw Error(Errc::invalid_argument, "target from nBits",
                "nBits " + nbits_text(nbits) + " encodes a negative target (sign bit 0x00800000 set)");
  if (mantissa != 0 && (exponent > 34 || (mantissa > 0xff && exponent > 33) || (mantissa > 0xffff && exponent > 32)))
    throw Error(Errc::invalid_argument, "target from nBits",
                "nBits " + nbits_text(nbits) + " overflows 256 bits (exponent " + std::to_string(exponent) + ")");
  Target t;
  if (exponent <= 3) {
    mantissa >>= 8 * (3 - exponent);
    for (int i = 0; i < 3; ++i) t.bytes[31 - i] = static_cast<std::uint8_t>(mantissa >> (8 * i));
  } else {
    // Byte i of the mantissa (little-endian) lands at little-endian position exponent - 3 + i.
    for (int i = 0; i < 3; ++i) {
      const int position = exponent - 3 + i;
      if (position < 32) t.bytes[31 - position] = static_cast<std::uint8_t>(mantissa >> (8 * i));
    }
  }
  if (is_zero(t))
    throw Error(Errc::invalid_argument, "target from nBits",
                "nBits " + nbits_text(nbits) + " gives a zero target: an impossible target, no hash is <= 0");
  return t;
}

Target Target::from_hex(std::string_view hex) {
  const auto raw = parse_hex(hex, 32, "target");
  Target t;
  std::copy(raw.begin(), raw.end(), t.bytes.begin());
  if (is_zero(t))
    throw Error(Errc::invalid_argument, "parse target", "the target is zero: an impossible target, no hash is <= 0");
  return t;
}

Target Target::from_leading_zero_bits(int bits) {
  if (bits < 1 || bits > 255)
    throw Error(Errc::invalid_argument, "target from difficulty",
                "difficulty must be 1..255 leading zero bits, got " + std::to_string(bits));
  Target t;
  // 2^(256 - bits) - 1: `bits` zero bits, then ones.
  for (int bit = bits; bit < 256; ++bit) t.bytes[bit / 8] |= static_cast<std::uint8_t>(0x80u >> (bit % 8));
  return t;
}

std::string Target::hex() const {
  return to_hex(bytes);
}

std::uint32_t Target::top_word() const {
  return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) | (std::uint32_t{bytes[2]} << 8) | bytes[3];
}

bool bitcoin_meets(const Sha256Digest& digest, const Target& target) {
  // The digest's last byte is the number's most significant one.
  for (int i = 0; i < 32; ++i) {
    const std::uint8_t h = digest[31 - i], t = target.bytes[i];
    if (h != t) return h < t;
  }
  return true;
}

bool data_meets(const Sha256Digest& digest, const Target& target) {
  return !std::lexicographical_compare(target.bytes.begin(), target.bytes.end(), digest.begin(), digest.end());
}

}  // namespace opkit::ops
