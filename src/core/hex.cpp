// Hex text <-> bytes (see opkit/hex.hpp).
#include "opkit/hex.hpp"

#include "opkit/error.hpp"

namespace opkit {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

char* write_hex(std::span<const std::uint8_t> bytes, char* out) {
  static constexpr char digits[] = "0123456789abcdef";
  for (const std::uint8_t b : bytes) {
    *out++ = digits[b >> 4];
    *out++ = digits[b & 15];
  }
  return out;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  std::string out(2 * bytes.size(), '0');
  write_hex(bytes, out.data());
  return out;
}

std::vector<std::uint8_t> parse_hex(std::string_view text, std::size_t bytes, std::string_view what) {
  const std::string stage = "parse " + std::string(what);
  if (text.size() != 2 * bytes)
    throw Error(Errc::invalid_argument, stage,
                std::string(what) + " must be " + std::to_string(2 * bytes) + " hex digits (" + std::to_string(bytes) +
                    " bytes), got " + std::to_string(text.size()) + " characters");
  std::vector<std::uint8_t> out(bytes);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const int v = hex_value(text[i]);
    if (v < 0)
      throw Error(Errc::invalid_argument, stage,
                  std::string(what) + " has a non-hex character '" + std::string(1, text[i]) + "' at position " +
                      std::to_string(i));
    out[i / 2] = static_cast<std::uint8_t>(i % 2 == 0 ? v << 4 : out[i / 2] | v);
  }
  return out;
}

std::vector<std::uint8_t> parse_hex(std::string_view text, std::string_view what) {
  const std::string stage = "parse " + std::string(what);
  if (text.size() % 2 != 0)
    throw Error(Errc::invalid_argument, stage,
                std::string(what) + " has an odd number of hex digits (" + std::to_string(text.size()) + ")");
  for (std::size_t i = 0; i < text.size(); ++i)
    if (hex_value(text[i]) < 0)
      throw Error(Errc::invalid_argument, stage,
                  std::string(what) + " has a character other than 0-9, a-f, A-F at position " + std::to_string(i));
  std::vector<std::uint8_t> out(text.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::uint8_t>(hex_value(text[2 * i]) << 4 | hex_value(text[2 * i + 1]));
  return out;
}

}  // namespace opkit
