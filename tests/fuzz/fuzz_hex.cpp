// libFuzzer target: opkit::parse_hex on any text. It either throws opkit::Error or returns exactly
// the bytes the digits spell (to_hex of them is the input, lower-cased).
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "opkit/error.hpp"
#include "opkit/hex.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t bytes = size / 2;  // the length most inputs are meant to have; odd sizes must fail
  try {
    const std::vector<std::uint8_t> parsed = opkit::parse_hex(text, bytes, "fuzz input");
    std::string lower(text);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (parsed.size() != bytes || opkit::to_hex(parsed) != lower) std::abort();
  } catch (const opkit::Error&) {
  }
  return 0;
}
