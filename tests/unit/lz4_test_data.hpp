// Inputs for the LZ4 tests: random (incompressible), text-like, runs that force overlapping
// matches at offsets 1..16, and the sizes around block boundaries; plus liblz4's frame API as the
// independent reference.
#pragma once

#include <lz4.h>
#include <lz4frame.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace opkit::test {

using Bytes = std::vector<std::uint8_t>;

inline Bytes random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

// Words from a small vocabulary with numbers: compresses about like source code or logs.
inline Bytes text_bytes(std::size_t n, std::uint32_t seed) {
  static const char* words[] = {"the ",   "frame ", "block ", "lz4 ",   "kernel ", "error ",  "offset ",
                                "match ", "= ",     "\n",     "const ", "size ",   "(void) ", "return "};
  std::mt19937 rng(seed);
  Bytes b;
  b.reserve(n + 16);
  while (b.size() < n) {
    if (rng() % 5 == 0) {
      const std::string number = std::to_string(rng() % 1000) + " ";
      b.insert(b.end(), number.begin(), number.end());
    } else {
      const std::string w = words[rng() % std::size(words)];
      b.insert(b.end(), w.begin(), w.end());
    }
  }
  b.resize(n);
  return b;
}

// Repeats of short random patterns (period 1..16) between random bytes: every match overlaps.
inline Bytes periodic_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b;
  b.reserve(n);
  while (b.size() < n) {
    const std::size_t period = 1 + rng() % 16;
    const std::size_t base = b.size();
    for (std::size_t j = 0; j < period; ++j) b.push_back(static_cast<std::uint8_t>(rng()));
    const std::size_t repeat = 4 + rng() % 3000;
    for (std::size_t j = 0; j < repeat; ++j) b.push_back(b[base + j % period]);
    for (std::size_t j = rng() % 8; j > 0; --j) b.push_back(static_cast<std::uint8_t>(rng()));
  }
  b.resize(n);
  return b;
}

// Like an executable or object file: records of little-endian fields (counters, pointers a small
// stride apart, flags), zero padding, short strings, stretches of random bytes (code, hashes),
// and copies of earlier stretches with a few bytes changed (relocated code).
inline Bytes binary_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b;
  b.reserve(n + 4096);
  auto put = [&](std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  std::uint64_t pointer = 0x400000 + rng() % 4096;
  while (b.size() < n) {
    switch (rng() % 5) {
      case 0:  // a table of records
        for (std::uint32_t r = 0, count = 4 + rng() % 60; r < count; ++r) {
          put(r, 4);
          put(pointer += 8 * (1 + rng() % 4), 8);
          put(rng() % 4 == 0 ? rng() % 256 : 0, 4);
        }
        break;
      case 1:  // padding
        b.resize(b.size() + 1 + rng() % 200, 0);
        break;
      case 2:  // a symbol name
        for (std::uint32_t j = 0, len = 3 + rng() % 20; j < len; ++j)
          b.push_back(static_cast<std::uint8_t>('a' + rng() % 26));
        b.push_back(0);
        break;
      case 3:  // random bytes
        for (std::uint32_t j = 0, len = 1 + rng() % 300; j < len; ++j) b.push_back(static_cast<std::uint8_t>(rng()));
        break;
      default:  // an earlier stretch again, a few bytes changed
        if (b.size() > 64) {
          const std::size_t len = std::min<std::size_t>(8 + rng() % 500, b.size() / 2);
          const std::size_t from = b.size() - len - rng() % std::min<std::size_t>(b.size() - len, 60000);
          for (std::size_t j = 0; j < len; ++j)
            b.push_back(rng() % 40 == 0 ? static_cast<std::uint8_t>(rng()) : b[from + j]);
        }
    }
  }
  b.resize(n);
  return b;
}

struct FramePrefs {
  int block_size_id = 4;  // 4..7
  bool linked = false;
  bool block_checksum = false;
  bool content_checksum = true;
  bool content_size = false;
};

// liblz4's LZ4F_compressFrame at level 1.
inline Bytes liblz4_compress(const Bytes& data, const FramePrefs& p) {
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = static_cast<LZ4F_blockSizeID_t>(p.block_size_id);
  prefs.frameInfo.blockMode = p.linked ? LZ4F_blockLinked : LZ4F_blockIndependent;
  prefs.frameInfo.blockChecksumFlag = p.block_checksum ? LZ4F_blockChecksumEnabled : LZ4F_noBlockChecksum;
  prefs.frameInfo.contentChecksumFlag = p.content_checksum ? LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum;
  prefs.frameInfo.contentSize = p.content_size ? data.size() : 0;
  prefs.compressionLevel = 1;
  Bytes out(LZ4F_compressFrameBound(data.size(), &prefs));
  const std::size_t n = LZ4F_compressFrame(out.data(), out.size(), data.data(), data.size(), &prefs);
  if (LZ4F_isError(n)) throw std::runtime_error(LZ4F_getErrorName(n));
  out.resize(n);
  return out;
}

// Every frame kind liblz4 writes: block sizes 64 KiB..4 MiB (ids 4..7), linked or independent
// blocks, with or without block checksums and the content size; with `both_content_checksums`,
// each also with and without the content checksum (otherwise always with it, lz4's default).
inline std::vector<FramePrefs> every_frame_kind(bool both_content_checksums = false) {
  std::vector<FramePrefs> kinds;
  for (int id = 4; id <= 7; ++id)
    for (int flags = 0; flags < (both_content_checksums ? 16 : 8); ++flags)
      kinds.push_back({.block_size_id = id,
                       .linked = (flags & 1) != 0,
                       .block_checksum = (flags & 2) != 0,
                       .content_checksum = !both_content_checksums || (flags & 8) != 0,
                       .content_size = (flags & 4) != 0});
  return kinds;
}

// "-B5 -BD -BX --content-size --no-frame-crc": the frame kind as lz4's options, for messages.
inline std::string describe(const FramePrefs& p) {
  std::string s = "-B" + std::to_string(p.block_size_id);
  if (p.linked) s += " -BD";
  if (p.block_checksum) s += " -BX";
  if (p.content_size) s += " --content-size";
  if (!p.content_checksum) s += " --no-frame-crc";
  return s;
}

// liblz4's LZ4F_decompress over all concatenated frames (skippable ones included); nullopt where
// liblz4 reports an error or the input ends inside a frame.
inline std::optional<Bytes> liblz4_decompress(const Bytes& frames, std::size_t limit = std::size_t{64} << 20) {
  LZ4F_dctx* ctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION))) return std::nullopt;
  Bytes out;
  std::uint8_t buffer[1 << 16];
  std::size_t pos = 0, hint = 1;
  bool ok = true;
  for (;;) {  // until the input is used up and the last frame has ended
    if (pos == frames.size() && hint == 0) break;
    std::size_t in_size = frames.size() - pos, out_size = sizeof buffer;
    hint = LZ4F_decompress(ctx, buffer, &out_size, frames.data() + pos, &in_size, nullptr);
    if (LZ4F_isError(hint) || out.size() + out_size > limit) {
      ok = false;
      break;
    }
    out.insert(out.end(), buffer, buffer + out_size);
    pos += in_size;
    if (in_size == 0 && out_size == 0) break;
  }
  LZ4F_freeDecompressionContext(ctx);
  if (!ok || hint != 0 || pos != frames.size()) return std::nullopt;  // hint 0: the frame ended
  return out;
}

// `lz4 -l`: magic 0x184C2102, then size-prefixed blocks of 8 MiB of data each.
inline Bytes legacy_frame(const Bytes& data) {
  Bytes out = {0x02, 0x21, 0x4C, 0x18};
  const std::size_t block = 8 << 20;
  for (std::size_t at = 0; at < data.size(); at += block) {
    const int n = static_cast<int>(std::min(block, data.size() - at));
    Bytes packed(static_cast<std::size_t>(LZ4_compressBound(n)));
    const int size = LZ4_compress_default(reinterpret_cast<const char*>(data.data() + at),
                                          reinterpret_cast<char*>(packed.data()), n, static_cast<int>(packed.size()));
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<std::uint8_t>(size >> (8 * b)));
    out.insert(out.end(), packed.begin(), packed.begin() + size);
  }
  return out;
}

// Sizes around the block boundaries of a 64 KiB block frame, and several blocks.
inline std::vector<std::size_t> boundary_sizes() {
  const std::size_t k = 65536;
  return {0, 1, 2, 12, 13, 100, k - 1, k, k + 1, 2 * k - 1, 2 * k, 2 * k + 1, 5 * k + 777};
}

}  // namespace opkit::test
