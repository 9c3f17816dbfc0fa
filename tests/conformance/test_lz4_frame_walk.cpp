// The device frame walk (lz4_frame_scan.cu) in parallel against the serial walk, its reference
// (DeviceLz4::scan, ScanMode::parallel / ::serial), on every device: the records (positions and
// bytes) and their counts must be the same for every input. Valid frames of every kind opkit and
// liblz4 write, alone, concatenated and in batches at every alignment, must also take the graph
// (the path gives every record but the first frame header's); hostile inputs (every truncation,
// every single-byte mutation of small frames, random mutations of larger ones, lying size words,
// zero words, runs of tiny blocks, frames inside raw blocks, word-like data) only need the same
// records, which is what bounds the graph's shortcuts: whatever they cannot take is walked
// serially.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "conformance/devices.hpp"
#include "lz4/device_lz4.hpp"
#include "opkit/buffer.hpp"
#include "opkit/ops/lz4.hpp"
#include "unit/lz4_test_data.hpp"

namespace {

using opkit::ops::Lz4BlockSize;
using opkit::ops::Lz4CompressOptions;
using namespace opkit::test;
namespace lz4 = opkit::ops::lz4;
using Mode = lz4::DeviceLz4::ScanMode;

OPKIT_CONFORMANCE_OPERATOR_SUITE(Lz4FrameWalk, opkit::ops::lz4_support());

std::uint32_t fresh_seed() {
  return std::random_device()();
}

void put32(Bytes& b, std::size_t at, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) b[at + k] = static_cast<std::uint8_t>(v >> (8 * k));
}
void append32(Bytes& b, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) b.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
}

// A frame header by hand: FLG (version 01, independent blocks, `flags`' bits 0x10 block
// checksums, 0x08 content size, 0x04 content checksum), BD, content size 0, a checksum byte the
// walk does not read.
Bytes frame_header(std::uint8_t flags, int block_size_id) {
  Bytes h = {
      0x04, 0x22, 0x4D, 0x18, static_cast<std::uint8_t>(0x60 | flags), static_cast<std::uint8_t>(block_size_id << 4)};
  if (flags & 0x08) h.insert(h.end(), 8, 0);
  h.push_back(0xAB);
  return h;
}

Bytes opkit_frame(const Bytes& data, Lz4BlockSize size, bool block_checksums, bool content_checksum,
                  bool content_size) {
  Lz4CompressOptions o;
  o.block_size = size;
  o.block_checksums = block_checksums;
  o.content_checksum = content_checksum;
  o.content_size = content_size;
  return opkit::ops::lz4_compress(data, o);
}

Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Mostly one byte, a random one every 4 KiB: a few bytes a block compressed.
Bytes sparse_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n, 'a');
  for (std::size_t p = rng() % 4096; p < n; p += 4096) b[p] = static_cast<std::uint8_t>(rng());
  return b;
}

struct Walked {
  lz4::DeviceLz4::Scan serial, parallel, automatic;
  lz4::DeviceLz4::ScanStats stats;
};

class Lz4FrameWalkCheck {
 public:
  explicit Lz4FrameWalkCheck(const opkit::Device& device) : engine_(device) {}

  // The items in one device buffer, each after 0..22 random bytes (every alignment mod 16), with
  // random bytes after the last: the walks in the three modes.
  Walked walk(const std::vector<Bytes>& items, std::uint32_t seed) const {
    std::mt19937 rng(seed);
    Bytes all;
    std::vector<unsigned long long> at, size;
    for (const Bytes& item : items) {
      for (std::uint32_t pad = rng() % 23; pad > 0; --pad) all.push_back(static_cast<std::uint8_t>(rng()));
      at.push_back(all.size());
      size.push_back(item.size());
      all.insert(all.end(), item.begin(), item.end());
    }
    for (int k = 0; k < 16; ++k) all.push_back(static_cast<std::uint8_t>(rng()));
    const auto buffer = lz4::upload(engine_.device(), std::span<const std::uint8_t>(all));
    Walked w;
    w.serial = engine_.scan(buffer.data(), at, size, Mode::serial);
    w.parallel = engine_.scan(buffer.data(), at, size, Mode::parallel, &w.stats);
    w.automatic = engine_.scan(buffer.data(), at, size, Mode::automatic);
    return w;
  }

  // The walks must agree; returns them for more checks.
  Walked expect_same(const std::vector<Bytes>& items, const std::string& label, std::uint32_t seed = 1) const {
    Walked w = walk(items, seed);
    expect_equal(w.serial, w.parallel, items.size(), label + " (parallel)");
    expect_equal(w.serial, w.automatic, items.size(), label + " (automatic)");
    return w;
  }

  const lz4::DeviceLz4& engine() const { return engine_; }

 private:
  static void expect_equal(const lz4::DeviceLz4::Scan& a, const lz4::DeviceLz4::Scan& b, std::size_t items,
                           const std::string& label) {
    ASSERT_EQ(a.first.size(), items + 1) << label;
    ASSERT_EQ(b.first.size(), items + 1) << label;
    for (std::size_t i = 0; i < items; ++i) {
      const std::size_t n = a.first[i + 1] - a.first[i];
      ASSERT_EQ(b.first[i + 1] - b.first[i], n) << label << ": item " << i << "'s record count";
      for (std::size_t r = 0; r < n; ++r) {
        const Lz4ScanRecord& x = a.records[a.first[i] + r];
        const Lz4ScanRecord& y = b.records[b.first[i] + r];
        ASSERT_TRUE(x.at == y.at && x.len == y.len && std::memcmp(x.bytes, y.bytes, sizeof x.bytes) == 0)
            << label << ": item " << i << ", record " << r << " of " << n << ": at " << x.at << " vs " << y.at << ", "
            << x.len << " vs " << y.len << " bytes";
      }
    }
  }

  lz4::DeviceLz4 engine_;
};

// Valid frames: the same records, and every one of them but the head walk's first frame header
// (one per item) from the graph.
TEST_P(Lz4FrameWalk, ValidFramesOfEveryKindTakeTheGraph) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory");
  const Lz4FrameWalkCheck check(device);
  const std::uint32_t seed = fresh_seed();
  const std::string at = "seed " + std::to_string(seed);
  std::vector<Bytes> frames;
  // opkit's frames: every block size (three blocks and a short one each) and option.
  for (Lz4BlockSize size : {Lz4BlockSize::kib64, Lz4BlockSize::kib256, Lz4BlockSize::mib1, Lz4BlockSize::mib4}) {
    const std::size_t block = std::size_t{1} << (8 + 2 * static_cast<int>(size));
    const Bytes data = binary_bytes(3 * block + 1234, seed + static_cast<std::uint32_t>(size));
    for (int flags = 0; flags < 8; ++flags) frames.push_back(opkit_frame(data, size, flags & 1, flags & 2, flags & 4));
  }
  // liblz4's: every kind (linked blocks too: the walk does not care).
  const Bytes periodic = periodic_bytes(700000, seed);
  for (const FramePrefs& p : every_frame_kind(true)) frames.push_back(liblz4_compress(periodic, p));
  frames.push_back(liblz4_compress(text_bytes(3 << 20, seed), FramePrefs{}));
  // Highly compressible: ~270 bytes a block, more records than the first walk's room.
  frames.push_back(opkit_frame(Bytes(32 << 20, 0), Lz4BlockSize::kib64, true, true, false));
  frames.push_back(liblz4_compress(Bytes(9 << 20, 7), FramePrefs{.block_size_id = 4, .block_checksum = true}));
  // Frames of the same rules back to back: the end marks link them (one graph).
  frames.push_back(
      concat({frames[0], frames[0], opkit_frame(text_bytes(200000, seed), Lz4BlockSize::kib64, false, false, true)}));
  // Empty frames, and many small ones.
  frames.push_back(opkit_frame(Bytes(), Lz4BlockSize::kib64, false, true, false));
  Bytes many;
  for (int k = 0; k < 40; ++k) {
    const Bytes small = liblz4_compress(text_bytes(70000 + 977 * static_cast<std::size_t>(k), seed + k), FramePrefs{});
    many.insert(many.end(), small.begin(), small.end());
  }
  frames.push_back(many);

  const Walked batch = check.expect_same(frames, at + ", batch", seed);
  std::size_t records = batch.serial.records.size();
  EXPECT_EQ(batch.stats.parallel_items, frames.size()) << at;
  EXPECT_EQ(batch.stats.path_records, records - frames.size()) << at << ": records the graph did not give";
  for (std::size_t i : {std::size_t{0}, std::size_t{31}, frames.size() - 5, frames.size() - 1}) {  // alone
    const Walked one = check.expect_same({frames[i]}, at + ", item " + std::to_string(i), seed + 1);
    EXPECT_EQ(one.stats.path_records, one.serial.records.size() - 1) << at << ", item " << i;
  }
}

// What the graph does not cover is walked serially after it: frames with other rules, skippable
// and legacy frames, and what stands before the first frame.
TEST_P(Lz4FrameWalk, MixedFramesAndEmptyItems) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory");
  const Lz4FrameWalkCheck check(device);
  const std::uint32_t seed = fresh_seed();
  const std::string at = "seed " + std::to_string(seed);
  const Bytes text = text_bytes(300000, seed), bin = binary_bytes(500000, seed + 1);
  const Bytes a = opkit_frame(bin, Lz4BlockSize::kib64, true, true, false);
  const Bytes b = liblz4_compress(text, FramePrefs{.block_size_id = 5, .block_checksum = false});
  const Bytes c = liblz4_compress(text, FramePrefs{.block_size_id = 4, .content_checksum = false});
  const Bytes legacy = legacy_frame(text_bytes(9 << 20, seed + 2));
  const Bytes skippable = {0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 9, 9, 9};
  const std::vector<Bytes> items = {
      concat({a, b, a}),                                                          // other rules: the tail walks on
      concat({a, c}),                                                             // same size, no block checksums
      concat({a, opkit_frame(bin, Lz4BlockSize::kib64, true, false, false), a}),  // no content checksum
      concat({a, skippable, a}),
      concat({skippable, a}),
      concat({legacy, a}),
      concat({a, legacy}),
      concat({legacy, skippable, c, c}),
      concat({a, Bytes(1000, 0)}),  // zeros after the end
      concat({a, Bytes(3, 1)}),
      Bytes(),
      Bytes(1, 0x04),
      Bytes(a.begin(), a.begin() + 7),
      Bytes(a.begin(), a.begin() + 15),
      skippable,
      legacy,
  };
  const Walked w = check.expect_same(items, at, seed);
  EXPECT_GT(w.stats.path_records, 0u) << at;
  for (std::size_t i = 0; i < items.size(); ++i)
    check.expect_same({items[i]}, at + ", item " + std::to_string(i), seed + i);
  check.expect_same({Bytes(), Bytes(), Bytes()}, "empty items");
}

// Every truncation and every single-byte change of small frames (one batch each).
TEST_P(Lz4FrameWalk, TruncatedAndMutatedSmallFrames) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory");
  const Lz4FrameWalkCheck check(device);
  const std::uint32_t seed = fresh_seed();
  std::mt19937 rng(seed);
  const std::string at = "seed " + std::to_string(seed);
  const std::vector<Bytes> smalls = {
      opkit_frame(Bytes(1 << 20, 0), Lz4BlockSize::kib64, true, true, true),  // 16 blocks of ~270 bytes
      concat({liblz4_compress(sparse_bytes(200000, seed), FramePrefs{.block_size_id = 4, .content_checksum = false}),
              opkit_frame(Bytes(300000, 3), Lz4BlockSize::kib64, false, true, false)}),
      liblz4_compress(Bytes(150000, 9), FramePrefs{.block_size_id = 4, .block_checksum = true, .content_size = true}),
  };
  for (std::size_t f = 0; f < smalls.size(); ++f) {
    const Bytes& frame = smalls[f];
    ASSERT_LT(frame.size(), 9000u) << f;
    std::vector<Bytes> cut, mutated;
    for (std::size_t n = 0; n <= frame.size(); ++n)
      cut.emplace_back(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(n));
    for (std::size_t p = 0; p < frame.size(); ++p) {
      Bytes m = frame;
      m[p] ^= static_cast<std::uint8_t>(1 + rng() % 255);
      mutated.push_back(std::move(m));
    }
    check.expect_same(cut, at + ", frame " + std::to_string(f) + " truncated", seed + f);
    check.expect_same(mutated, at + ", frame " + std::to_string(f) + " mutated", seed + 7 * f);
  }
}

// Random mutations of larger frames (half of them at size words and checksums), and size words
// that lie: 0, the raw bit alone, the maximum and one more, past the end, onto another block's
// word, into the middle of a block.
TEST_P(Lz4FrameWalk, MutatedLargerFramesAndLyingSizeWords) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory");
  const Lz4FrameWalkCheck check(device);
  const std::uint32_t seed = fresh_seed();
  std::mt19937 rng(seed);
  const std::string at = "seed " + std::to_string(seed);
  const Bytes frame = opkit_frame(binary_bytes(640000, seed), Lz4BlockSize::kib64, true, true, false);
  // The block size words, from the serial walk's records (even ones: a checksum follows each block).
  const Walked base = check.expect_same({frame}, at + ", the frame");
  std::vector<std::size_t> words;
  for (std::size_t r = 1; r < base.serial.records.size(); r += 2) words.push_back(base.serial.records[r].at);
  ASSERT_GT(words.size(), 8u);
  std::vector<Bytes> mutants;
  for (int k = 0; k < 60; ++k) {
    Bytes m = frame;
    for (int changes = 1 + static_cast<int>(rng() % 4); changes > 0; --changes) {
      const std::size_t p = k % 2 ? rng() % m.size() : words[rng() % words.size()] + rng() % 8;
      m[std::min(p, m.size() - 1)] ^= static_cast<std::uint8_t>(1 + rng() % 255);
    }
    mutants.push_back(std::move(m));
  }
  check.expect_same(mutants, at + ", random mutations", seed);

  std::vector<Bytes> liars;
  for (std::size_t b : {std::size_t{0}, std::size_t{3}, words.size() - 2}) {
    const std::size_t w = words[b];
    const std::uint32_t stored = static_cast<std::uint32_t>(frame[w] | frame[w + 1] << 8 | frame[w + 2] << 16 |
                                                            static_cast<std::uint32_t>(frame[w + 3]) << 24);
    const std::uint32_t next_word = static_cast<std::uint32_t>(words[b + 1] - w);  // onto the next block's word
    for (std::uint32_t v :
         {0u, 0x80000000u, 65536u, 65537u, 0x7FFFFFFFu, 1u, stored & 0x7FFFFFFFu, stored ^ 0x80000000u, stored + 1,
          stored - 1, next_word, next_word - 8, static_cast<std::uint32_t>(frame.size() - w - 4),
          static_cast<std::uint32_t>(frame.size() - w - 8), static_cast<std::uint32_t>(frame.size() - w)}) {
      Bytes m = frame;
      put32(m, w, v);
      liars.push_back(std::move(m));
    }
  }
  check.expect_same(liars, at + ", lying size words", seed + 1);
}

// Inputs made to look like blocks: zero words, runs of tiny blocks (more nodes than a tile or an
// item may hold: walked serially), a frame inside raw blocks (a second, false chain beside the
// true one), data of word-like bytes, and long runs of empty frames.
TEST_P(Lz4FrameWalk, WordLikeAndDenseInputs) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory");
  const Lz4FrameWalkCheck check(device);
  const std::uint32_t seed = fresh_seed();
  std::mt19937 rng(seed);
  const std::string at = "seed " + std::to_string(seed);
  std::vector<Bytes> items;
  for (std::size_t n : {0u, 1u, 3u, 4u, 5u, 8u, 11u, 64u, 4096u}) {
    items.push_back(Bytes(n, 0));
    items.push_back(concat({frame_header(0x04, 4), Bytes(n, 0)}));
    items.push_back(concat({frame_header(0x14, 7), Bytes(n, 0)}));
  }
  items.push_back(concat({frame_header(0x00, 4), Bytes(1 << 20, 0)}));
  // Tiny blocks: 5 bytes each (a 1-byte raw block), for a whole item and in a stretch of a real frame.
  const Bytes tiny = {0x01, 0x00, 0x00, 0x80, 0x41};
  Bytes tinies = frame_header(0x00, 4);
  for (int k = 0; k < 30000; ++k) tinies.insert(tinies.end(), tiny.begin(), tiny.end());
  append32(tinies, 0);
  items.push_back(tinies);
  const Bytes real = opkit_frame(binary_bytes(1 << 20, seed), Lz4BlockSize::kib64, false, false, false);
  const Bytes tiny2 = {0x02, 0x00, 0x00, 0x80, 0x41, 0x44};  // (no false chain through its bytes)
  for (int run : {700, 2000}) {                              // within a tile's room, and past it
    Bytes stretch(real.begin(), real.end() - 4);             // without its end mark
    for (int k = 0; k < run; ++k) stretch.insert(stretch.end(), tiny2.begin(), tiny2.end());
    stretch.insert(stretch.end(), real.begin() + 7, real.end());  // its blocks again, and the end mark
    items.push_back(stretch);
  }
  // A frame of small blocks stored in the raw blocks of another with the same rules, 4000 bytes
  // at a time: the inner blocks chain too, 15 at a time.
  const Bytes inner = opkit_frame(Bytes(8 << 20, 0), Lz4BlockSize::kib64, false, false, false);
  Bytes outer = frame_header(0x00, 4);
  for (std::size_t p = 0; p < inner.size(); p += 4000) {
    const std::size_t n = std::min<std::size_t>(4000, inner.size() - p);
    append32(outer, static_cast<std::uint32_t>(n) | 0x80000000u);
    outer.insert(outer.end(), inner.begin() + static_cast<std::ptrdiff_t>(p),
                 inner.begin() + static_cast<std::ptrdiff_t>(p + n));
  }
  append32(outer, 0);
  items.push_back(outer);
  // Word-like data: two random bytes then "00 00" (or "00 80"), and random words of small sizes.
  Bytes wordy = frame_header(0x04, 4), smalls = frame_header(0x10, 5);
  for (int k = 0; k < 200000; ++k) {
    wordy.push_back(static_cast<std::uint8_t>(rng()));
    wordy.push_back(static_cast<std::uint8_t>(rng()));
    wordy.push_back(0);
    wordy.push_back(rng() % 2 ? 0x80 : 0);
    append32(smalls, static_cast<std::uint32_t>(rng() % 300));
  }
  items.push_back(wordy);
  items.push_back(smalls);
  // Empty frames back to back (header + end mark): linked by the graph while they fit its room.
  for (int frames : {3, 50, 5000}) {
    Bytes empties;
    for (int k = 0; k < frames; ++k) {
      const Bytes h = frame_header(0x00, 4);
      empties.insert(empties.end(), h.begin(), h.end());
      append32(empties, 0);
    }
    items.push_back(empties);
  }
  check.expect_same(items, at, seed);
  for (std::size_t i = 0; i < items.size(); ++i)
    check.expect_same({items[i]}, at + ", item " + std::to_string(i), seed + i);
  // Where the graph has room, its path gives every record but the first header: the run of tiny
  // blocks within a tile's room, the outer frame beside the inner frame's false chains, 50 empty
  // frames.
  for (const Bytes* item : {&items[items.size() - 8], &outer, &items[items.size() - 2]}) {
    const Walked one = check.expect_same({*item}, at + ", a graph");
    EXPECT_EQ(one.stats.path_records, one.serial.records.size() - 1) << at;
  }
}

}  // namespace
