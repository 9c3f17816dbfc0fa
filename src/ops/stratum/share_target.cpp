// Pool difficulty to share target (see opkit/ops/stratum.hpp): an exact long division, because
// pools compute floor(diff1 / difficulty) with big integers and a share one unit over their
// target is rejected.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "opkit/error.hpp"
#include "opkit/ops/stratum.hpp"

namespace opkit::ops {
namespace {

std::string difficulty_text(double difficulty) {
  char text[48];
  std::snprintf(text, sizeof text, "%.17g", difficulty);
  return text;
}

}  // namespace

Target share_target(double difficulty) {
  if (!std::isfinite(difficulty) || !(difficulty > 0))
    throw Error(Errc::invalid_argument, "share target",
                "difficulty must be a finite number > 0, got " + difficulty_text(difficulty));
  // difficulty = divisor * 2^exponent exactly, divisor a 53-bit integer.
  int exponent = 0;
  const double fraction = std::frexp(difficulty, &exponent);
  const auto divisor = static_cast<std::uint64_t>(std::ldexp(fraction, 53));
  exponent -= 53;
  // diff1 = 0xffff * 2^208. Dividing by 2^exponent shifts it left (exponent < 0) or drops the
  // quotient's low bits (exponent > 0: floor(floor(x / d) / 2^e) = floor(x / (d * 2^e))).
  const int shift = 208 - std::min(exponent, 0);
  const int drop = std::max(exponent, 0);
  const int numerator_bits = 16 + shift;
  Target target;
  std::uint64_t remainder = 0;  // < divisor < 2^53, so remainder * 2 + 1 fits
  bool overflow = false;
  for (int i = 0; i < numerator_bits; ++i) {
    const int bit_position = numerator_bits - 1 - i;
    const std::uint64_t bit = bit_position >= shift ? (0xffffu >> (bit_position - shift)) & 1u : 0;
    remainder = remainder * 2 + bit;
    if (remainder < divisor) continue;
    remainder -= divisor;
    const int position = bit_position - drop;  // of this quotient bit in the target
    if (position >= 256) {
      overflow = true;
    } else if (position >= 0) {
      target.bytes[31 - position / 8] |= static_cast<std::uint8_t>(1u << (position % 8));
    }
  }
  if (overflow) target.bytes.fill(0xff);
  if (std::all_of(target.bytes.begin(), target.bytes.end(), [](std::uint8_t b) { return b == 0; }))
    throw Error(Errc::invalid_argument, "share target",
                "difficulty " + difficulty_text(difficulty) + " gives a zero target (the most is about 2^224)");
  return target;
}

}  // namespace opkit::ops
