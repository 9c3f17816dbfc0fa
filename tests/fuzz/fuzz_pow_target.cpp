// libFuzzer target: the mining target parsers (ops::Target::from_hex, from_compact, from
// leading-zero bits). Each throws opkit::Error or returns a target; never anything else.
#include <cstdint>
#include <cstring>
#include <string_view>

#include "opkit/error.hpp"
#include "opkit/ops/pow.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)opkit::ops::Target::from_hex(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const opkit::Error&) {
  }
  if (size >= 4) {
    std::uint32_t word = 0;
    std::memcpy(&word, data, 4);
    try {
      (void)opkit::ops::Target::from_compact(word);
    } catch (const opkit::Error&) {
    }
    try {
      (void)opkit::ops::Target::from_leading_zero_bits(static_cast<int>(word % 600) - 100);
    } catch (const opkit::Error&) {
    }
  }
  return 0;
}
