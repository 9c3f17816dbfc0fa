// libFuzzer target: the LZ4 frame decoder (frame parser, block decoder, checksums) on hostile
// input. Each input is decoded twice: whole, and through Lz4StreamDecoder in pieces whose size
// comes from the input's first byte. Properties: only opkit::Error is ever thrown; the two
// decodings agree (both fail, or both give the same bytes); nothing exceeds the output limit.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <vector>

#include "opkit/error.hpp"
#include "opkit/ops/lz4.hpp"

namespace {

constexpr std::size_t output_limit = std::size_t{1} << 20;

opkit::ops::Lz4DecompressOptions limited() {
  opkit::ops::Lz4DecompressOptions o;
  o.max_output = output_limit;
  return o;
}

// The whole input at once; nullopt when it is refused.
std::optional<std::vector<std::uint8_t>> whole(std::span<const std::uint8_t> in) {
  try {
    return opkit::ops::lz4_decompress(in, limited());
  } catch (const opkit::Error&) {
    return std::nullopt;
  }
}

// The input in pieces of `piece` bytes, kept in a window as the stream decoder asks.
std::optional<std::vector<std::uint8_t>> streamed(std::span<const std::uint8_t> in, std::size_t piece) {
  std::vector<std::uint8_t> out, window;
  try {
    opkit::ops::Lz4StreamDecoder decoder(
        limited(), [&out](std::span<const std::uint8_t> bytes) { out.insert(out.end(), bytes.begin(), bytes.end()); },
        std::size_t{64} << 10);
    for (std::size_t at = 0;;) {
      const std::size_t n = std::min(piece, in.size() - at);
      window.insert(window.end(), in.begin() + static_cast<std::ptrdiff_t>(at),
                    in.begin() + static_cast<std::ptrdiff_t>(at + n));
      at += n;
      const bool last = at == in.size();
      const std::size_t done = decoder.decode(window, last);
      window.erase(window.begin(), window.begin() + static_cast<std::ptrdiff_t>(done));
      if (last) break;
    }
    return out;
  } catch (const opkit::Error&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  const auto a = whole(in);
  const auto b = streamed(in, size == 0 ? 1 : 1 + data[0] % 97);
  if (a.has_value() != b.has_value()) std::abort();
  if (a && (*a != *b || a->size() > output_limit)) std::abort();
  return 0;
}
