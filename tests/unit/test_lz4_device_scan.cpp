// The device-side block index (lz4_frame_scan.cu + DeviceFrameScan) on the CPU backend: for
// every kind of frame liblz4 and opkit write, alone and in batches, it finds the structure that
// parse_frames finds in a host copy with no read falling back to device memory (the walk predicted
// every one); for truncated, mutated and oversized frames it throws parse_frames's message.
#include <gtest/gtest.h>

#include <random>

#include "lz4/device_lz4.hpp"
#include "lz4/device_scan.hpp"
#include "lz4/frame_format.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/lz4.hpp"
#include "unit/lz4_test_data.hpp"

namespace {

using namespace opkit::test;
namespace lz4 = opkit::ops::lz4;

std::string parse_error(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const opkit::Error& e) {
    return e.message();
  }
  return "";
}

void expect_same(const lz4::ParsedInput& a, const lz4::ParsedInput& b, const std::string& label) {
  ASSERT_EQ(a.frames.size(), b.frames.size()) << label;
  ASSERT_EQ(a.blocks.size(), b.blocks.size()) << label;
  for (std::size_t f = 0; f < a.frames.size(); ++f) {
    EXPECT_EQ(a.frames[f].offset, b.frames[f].offset) << label;
    EXPECT_EQ(a.frames[f].bytes, b.frames[f].bytes) << label;
    EXPECT_EQ(a.frames[f].block_count, b.frames[f].block_count) << label;
    EXPECT_EQ(a.frames[f].content_checksum, b.frames[f].content_checksum) << label;
  }
  for (std::size_t i = 0; i < a.blocks.size(); ++i) {
    EXPECT_EQ(a.blocks[i].offset, b.blocks[i].offset) << label;
    EXPECT_EQ(a.blocks[i].stored, b.blocks[i].stored) << label;
    EXPECT_EQ(a.blocks[i].raw, b.blocks[i].raw) << label;
    EXPECT_EQ(a.blocks[i].checksum, b.blocks[i].checksum) << label;
  }
}

// Frames of every kind, in one batch: also the highly compressible ones whose records overflow
// the first walk's room, and an empty item.
std::vector<Bytes> batch_of_frames(std::uint32_t seed) {
  std::vector<Bytes> out;
  for (int flags = 0; flags < 16; ++flags) {
    FramePrefs p;
    p.block_size_id = 4 + flags % 4;
    p.linked = flags & 4;
    p.block_checksum = flags & 1;
    p.content_size = flags & 2;
    p.content_checksum = flags & 8;
    out.push_back(liblz4_compress(periodic_bytes(400000 + flags, seed + flags), p));
  }
  opkit::ops::Lz4CompressOptions o;
  o.block_checksums = true;
  out.push_back(opkit::ops::lz4_compress(Bytes(20 << 20, 0), o));  // 2 records per 270 bytes of frame
  Bytes mixed = legacy_frame(text_bytes(9 << 20, seed));
  const Bytes skippable = {0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 9, 9, 9};
  mixed.insert(mixed.end(), skippable.begin(), skippable.end());
  mixed.insert(mixed.end(), out[3].begin(), out[3].end());
  out.push_back(mixed);
  out.emplace_back();
  return out;
}

TEST(Lz4DeviceScan, FindsWhatTheHostParserFindsWithoutFallbacks) {
  const opkit::Device cpu = opkit::Device::cpu();
  const lz4::DeviceLz4 engine(cpu);
  const std::uint32_t seed = std::random_device()();
  const std::vector<Bytes> frames = batch_of_frames(seed);
  std::vector<opkit::DeviceBuffer<std::uint8_t>> buffers;
  std::vector<opkit::BufferView<const std::uint8_t>> views;
  for (const Bytes& f : frames) {
    buffers.push_back(lz4::upload(cpu, std::span<const std::uint8_t>(f)));
    views.push_back(buffers.back().view().subview(0, f.size()));
  }
  for (std::size_t n : {std::size_t{1}, frames.size()}) {  // one item (one walk) and the batch
    lz4::DeviceFrameScan scan(engine, std::span(views).first(n));
    for (std::size_t i = 0; i < n; ++i)
      expect_same(scan.parse(i), lz4::parse_frames(frames[i]),
                  "seed " + std::to_string(seed) + " item " + std::to_string(i));
    EXPECT_EQ(scan.fallback_reads(), 0u);
    EXPECT_GT(scan.records(), n == 1 ? 6u : 640u);  // the zeros alone: 2 per block, past the first room
  }
}

void expect_same_error(const lz4::DeviceLz4& engine, const Bytes& input, const std::string& label) {
  const std::string host = parse_error([&] { lz4::parse_frames(input); });
  const auto buffer = lz4::upload(engine.device(), std::span<const std::uint8_t>(input));
  const opkit::BufferView<const std::uint8_t> view = buffer.view().subview(0, input.size());
  const std::string device = parse_error([&] {
    lz4::DeviceFrameScan scan(engine, std::span(&view, 1));
    scan.parse(0);
  });
  EXPECT_EQ(device, host) << label;
}

TEST(Lz4DeviceScan, HostileFramesGetTheHostParsersErrors) {
  const lz4::DeviceLz4 engine(opkit::Device::cpu());
  const std::uint32_t seed = std::random_device()();
  std::mt19937 rng(seed);
  FramePrefs p;
  p.block_checksum = true;
  p.content_size = true;
  Bytes stream = liblz4_compress(text_bytes(200000, seed), p);
  const Bytes legacy = legacy_frame(text_bytes(3000, seed));
  stream.insert(stream.end(), legacy.begin(), legacy.end());
  const Bytes skippable = {0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 9, 9, 9};
  stream.insert(stream.end(), skippable.begin(), skippable.end());
  const Bytes tail = liblz4_compress(text_bytes(3000, seed + 1), FramePrefs{});
  stream.insert(stream.end(), tail.begin(), tail.end());
  for (std::size_t n = 0; n < stream.size(); n += 1 + rng() % 97)  // truncated
    expect_same_error(engine, Bytes(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(n)),
                      "seed " + std::to_string(seed) + " truncated to " + std::to_string(n));
  for (int round = 0; round < 400; ++round) {  // mutated: structure bytes are few, so aim at them too
    Bytes mutant = stream;
    const std::size_t at = round % 2 ? rng() % mutant.size() : rng() % 64;
    mutant[at] ^= static_cast<std::uint8_t>(1 + rng() % 255);
    expect_same_error(engine, mutant, "seed " + std::to_string(seed) + " byte " + std::to_string(at));
  }
  Bytes oversized = liblz4_compress(text_bytes(5000, seed), FramePrefs{});  // a block word past the frame's maximum
  oversized[7] = 0xFF, oversized[8] = 0xFF, oversized[9] = 0x7F;
  expect_same_error(engine, oversized, "oversized block");
  oversized[7] = 0x00, oversized[8] = 0x00, oversized[9] = 0x01, oversized[10] = 0x00;  // 64 KiB, fewer present
  expect_same_error(engine, oversized, "block larger than the input");
}

}  // namespace
