// The host engine: liblz4's block API (LZ4_compress_fast at acceleration 1, as `lz4 -1`;
// LZ4_decompress_safe, which bounds every read and write) over all cores with OpenMP.
#include <lz4.h>
#include <omp.h>
#include <xxhash.h>

#include <cstdio>
#include <cstring>
#include <limits>

#include "lz4/block_codec.hpp"
#include "opkit/error.hpp"

namespace opkit::ops::lz4 {
namespace {

class HostCodec final : public BlockCodec {
 public:
  void encode(std::span<const std::uint8_t> input, std::size_t block_bytes, bool block_checksums,
              std::vector<std::uint8_t>& section) override {
    const std::size_t count = (input.size() + block_bytes - 1) / block_bytes;
    const std::size_t slot_bytes = compress_bound(block_bytes);
    std::vector<std::uint8_t> slots(count * slot_bytes);
    std::vector<std::uint32_t> words(count);
    const auto n = static_cast<std::ptrdiff_t>(count);
#pragma omp parallel for schedule(dynamic, 4)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      const std::size_t first = static_cast<std::size_t>(i) * block_bytes;
      const int size = static_cast<int>(std::min(block_bytes, input.size() - first));
      char* slot = reinterpret_cast<char*>(slots.data()) + static_cast<std::size_t>(i) * slot_bytes;
      const int packed = LZ4_compress_fast(reinterpret_cast<const char*>(input.data() + first), slot, size,
                                           static_cast<int>(slot_bytes), 1);
      if (packed > 0 && packed < size) {
        words[i] = static_cast<std::uint32_t>(packed);
      } else {
        std::memcpy(slot, input.data() + first, static_cast<std::size_t>(size));
        words[i] = static_cast<std::uint32_t>(size) | uncompressed_bit;
      }
    }
    const std::size_t trailer = block_checksums ? 4 : 0;
    std::vector<std::size_t> at(count);
    std::size_t total = section.size();
    for (std::size_t i = 0; i < count; ++i) {
      at[i] = total;
      total += 4 + (words[i] & ~uncompressed_bit) + trailer;
    }
    section.resize(total);
#pragma omp parallel for schedule(dynamic, 16)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      const std::uint32_t stored = words[i] & ~uncompressed_bit;
      std::uint8_t* to = section.data() + at[i];
      const std::uint8_t* from = slots.data() + static_cast<std::size_t>(i) * slot_bytes;
      for (int b = 0; b < 4; ++b) to[b] = static_cast<std::uint8_t>(words[i] >> (8 * b));
      std::memcpy(to + 4, from, stored);
      if (trailer) {
        const std::uint32_t hash = XXH32(from, stored, 0);
        for (int b = 0; b < 4; ++b) to[4 + stored + b] = static_cast<std::uint8_t>(hash >> (8 * b));
      }
    }
  }

  std::vector<std::size_t> decode(std::span<const std::uint8_t> input, std::size_t input_base,
                                  std::span<const BlockRef> blocks, std::span<const std::size_t> slot_offsets,
                                  std::span<std::uint8_t> slots, bool verify) override {
    const std::size_t count = blocks.size();
    std::vector<std::size_t> sizes(count);
    std::vector<std::string> problems(count);
    const auto n = static_cast<std::ptrdiff_t>(count);
#pragma omp parallel for schedule(dynamic, 1)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      const BlockRef& b = blocks[i];
      const std::uint8_t* from = input.data() + (b.offset - input_base);
      if (verify && b.checksum) {
        const std::uint32_t hash = XXH32(from, b.stored, 0);
        if (hash != *b.checksum) {
          problems[i] = checksum_problem(*b.checksum, hash);
          continue;
        }
      }
      std::uint8_t* to = slots.data() + slot_offsets[i];
      const std::size_t cap = slot_offsets[i + 1] - slot_offsets[i];
      if (b.raw) {
        if (b.stored > cap) {
          problems[i] =
              "raw block of " + std::to_string(b.stored) + " bytes exceeds its room of " + std::to_string(cap);
          continue;
        }
        std::memcpy(to, from, b.stored);
        sizes[i] = b.stored;
        continue;
      }
      const int r = LZ4_decompress_safe(reinterpret_cast<const char*>(from), reinterpret_cast<char*>(to),
                                        static_cast<int>(b.stored), static_cast<int>(cap));
      if (r < 0)
        problems[i] = "corrupt LZ4 block (liblz4 stops at block byte " + std::to_string(-r - 1) +
                      "; or it decodes to more than " + std::to_string(cap) + " bytes)";
      else
        sizes[i] = static_cast<std::size_t>(r);
    }
    for (std::size_t i = 0; i < count; ++i)
      if (!problems[i].empty()) throw_block_error(blocks[i], problems[i]);
    return sizes;
  }
};

}  // namespace

std::unique_ptr<BlockCodec> host_block_codec() {
  return std::make_unique<HostCodec>();
}

std::string content_size_problem(std::uint64_t declared, std::size_t produced) {
  return "content size field says " + std::to_string(declared) + " bytes, the blocks decode to " +
         std::to_string(produced);
}

std::string content_checksum_problem(std::uint32_t expected, std::uint32_t actual) {
  char text[96];
  std::snprintf(text, sizeof text, "content checksum 0x%08X does not match the decoded data (0x%08X)", expected,
                actual);
  return text;
}

void throw_block_error(const BlockRef& block, const std::string& problem) {
  throw Error(Errc::invalid_argument, "lz4 frame", where(block) + ": " + problem);
}

std::string checksum_problem(std::uint32_t expected, std::uint32_t actual) {
  char text[96];
  std::snprintf(text, sizeof text, "block checksum 0x%08X does not match the data (0x%08X)", expected, actual);
  return text;
}

}  // namespace opkit::ops::lz4
