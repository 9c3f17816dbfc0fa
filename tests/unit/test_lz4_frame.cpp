// The LZ4 frame codec and the host engine (liblz4 blocks): round trips on every size class,
// interop with liblz4's frame API both ways, and hostile input (every truncation, every
// single-byte mutation of small frames, random mutations of larger ones, lying sizes, limits).
#include <gtest/gtest.h>
#include <lz4.h>
#include <xxhash.h>

#include <random>

#include "lz4/frame_format.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/lz4.hpp"
#include "unit/lz4_test_data.hpp"

namespace {

using namespace opkit::test;
using opkit::ops::Lz4BlockSize;
using opkit::ops::Lz4CompressOptions;
using opkit::ops::Lz4DecompressOptions;

Bytes compress(const Bytes& data, const Lz4CompressOptions& options = {}) {
  return opkit::ops::lz4_compress(data, options);
}
Bytes decompress(const Bytes& frames, const Lz4DecompressOptions& options = {}) {
  return opkit::ops::lz4_decompress(frames, options);
}

// The message of the opkit::Error that decoding `frames` throws ("" when it decodes).
std::string decode_error(const Bytes& frames, const Lz4DecompressOptions& options = {}) {
  try {
    decompress(frames, options);
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument) << e.what();
    return e.message();
  }
  return "";
}

using Generator = Bytes (*)(std::size_t, std::uint32_t);
const Generator generators[] = {random_bytes, text_bytes, periodic_bytes};

TEST(Lz4Frame, HostRoundTripsEverySizeClassAndLiblz4ReadsIt) {
  for (Generator gen : generators)
    for (std::size_t n : boundary_sizes()) {
      const Bytes data = gen(n, static_cast<std::uint32_t>(n));
      const Bytes frame = compress(data);
      EXPECT_EQ(decompress(frame), data) << n;
      EXPECT_EQ(liblz4_decompress(frame), data) << n;
    }
}

TEST(Lz4Frame, HostWritesEveryOptionLiblz4Reads) {
  const Bytes data = text_bytes(600000, 7);
  for (auto size : {Lz4BlockSize::kib64, Lz4BlockSize::kib256, Lz4BlockSize::mib1, Lz4BlockSize::mib4})
    for (int flags = 0; flags < 8; ++flags) {
      Lz4CompressOptions o;
      o.block_size = size;
      o.block_checksums = flags & 1;
      o.content_checksum = flags & 2;
      o.content_size = flags & 4;
      const Bytes frame = compress(data, o);
      EXPECT_EQ(liblz4_decompress(frame), data) << static_cast<int>(size) << " " << flags;
      EXPECT_EQ(decompress(frame), data);
      EXPECT_LE(frame.size(), opkit::ops::lz4_compress_bound(data.size(), o));
    }
}

TEST(Lz4Frame, DecodesEveryFrameLiblz4Writes) {
  for (Generator gen : generators) {
    const Bytes data = gen(700000, 3);
    for (const FramePrefs& p : every_frame_kind(true))
      EXPECT_EQ(decompress(liblz4_compress(data, p)), data) << describe(p);
  }
}

TEST(Lz4Frame, IndependentBlockRatioMatchesLiblz4) {
  const Bytes data = text_bytes(2 << 20, 11);
  FramePrefs p;
  const double ours = static_cast<double>(compress(data).size());
  const double theirs = static_cast<double>(liblz4_compress(data, p).size());
  EXPECT_LT(ours, theirs * 1.03);
}

TEST(Lz4Frame, IncompressibleBlocksAreStoredRaw) {
  const Bytes data = random_bytes(200000, 5);
  const Bytes frame = compress(data);
  EXPECT_LE(frame.size(), data.size() + 4 * 4 + 7 + 8);
  EXPECT_EQ(decompress(frame), data);
}

TEST(Lz4Frame, DecodesConcatenatedAndSkippableFrames) {
  const Bytes a = text_bytes(100000, 1), b = periodic_bytes(70000, 2);
  Bytes stream = compress(a);
  const Bytes skippable = {0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'x', 'y', 'z'};
  stream.insert(stream.end(), skippable.begin(), skippable.end());
  FramePrefs linked;
  linked.linked = true;
  const Bytes fb = liblz4_compress(b, linked);
  stream.insert(stream.end(), fb.begin(), fb.end());
  Bytes expected = a;
  expected.insert(expected.end(), b.begin(), b.end());
  EXPECT_EQ(decompress(stream), expected);
  EXPECT_EQ(liblz4_decompress(stream), expected);
}

TEST(Lz4Frame, DecodesLegacyFramesAloneAndFollowedByAFrame) {
  const Bytes data = text_bytes((8 << 20) + 5000, 9);
  Bytes stream = legacy_frame(data);
  EXPECT_EQ(decompress(stream), data);
  const Bytes tail = text_bytes(1000, 10);
  const Bytes next = compress(tail);
  stream.insert(stream.end(), next.begin(), next.end());
  Bytes expected = data;
  expected.insert(expected.end(), tail.begin(), tail.end());
  EXPECT_EQ(decompress(stream), expected);
}

TEST(Lz4Frame, EveryTruncationIsAnError) {
  for (const Bytes& data : {Bytes{}, text_bytes(300, 1), periodic_bytes(70000, 2)}) {
    Lz4CompressOptions o;
    o.block_checksums = true;
    o.content_size = true;
    for (const Bytes& frame : {compress(data), compress(data, o)})
      for (std::size_t n = 1; n < frame.size(); ++n)
        EXPECT_NE(decode_error(Bytes(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(n))), "") << n;
  }
}

// A mutated frame either fails with an opkit::Error or decodes to exactly what liblz4 makes of
// it; and whatever liblz4 accepts, opkit accepts too.
void expect_mutant_agrees(const Bytes& mutant, const std::string& label) {
  const std::string error = decode_error(mutant);
  const std::optional<Bytes> reference = liblz4_decompress(mutant);
  if (error.empty()) {
    ASSERT_TRUE(reference.has_value()) << label << ": opkit accepts what liblz4 rejects";
    EXPECT_EQ(decompress(mutant), *reference) << label;
  } else {
    EXPECT_FALSE(reference.has_value()) << label << ": liblz4 accepts, opkit says " << error;
  }
}

TEST(Lz4Frame, EverySingleByteMutationOfSmallFramesIsCaughtOrHarmless) {
  for (const Bytes& data : {text_bytes(200, 3), periodic_bytes(3000, 4)})
    for (int flags = 0; flags < 4; ++flags) {
      Lz4CompressOptions o;
      o.block_checksums = flags & 1;
      o.content_checksum = flags & 2;
      o.content_size = true;
      const Bytes frame = compress(data, o);
      for (std::size_t i = 0; i < frame.size(); ++i)
        for (std::uint8_t x : {0x01, 0x10, 0x80, 0xFF}) {
          Bytes mutant = frame;
          mutant[i] ^= x;
          expect_mutant_agrees(mutant, "byte " + std::to_string(i) + " ^ " + std::to_string(x));
        }
    }
}

TEST(Lz4Frame, RandomMutationsOfLargerFramesAreCaughtOrHarmless) {
  std::mt19937 rng(2026);
  for (Generator gen : generators) {
    FramePrefs p;
    p.content_checksum = false;  // let mutated blocks reach the block decoder
    const Bytes frame = liblz4_compress(gen(300000, 8), p);
    for (int round = 0; round < 150; ++round) {
      Bytes mutant = frame;
      for (int k = 1 + static_cast<int>(rng() % 4); k > 0; --k)
        mutant[rng() % mutant.size()] = static_cast<std::uint8_t>(rng());
      expect_mutant_agrees(mutant, "round " + std::to_string(round));
    }
  }
}

TEST(Lz4Frame, ErrorsNameFrameBlockAndByte) {
  const Bytes data = text_bytes(200000, 5);
  Lz4CompressOptions o;
  o.block_checksums = true;
  Bytes stream = compress(Bytes{1, 2, 3});
  const std::size_t second = stream.size();
  const Bytes frame = compress(data, o);
  stream.insert(stream.end(), frame.begin(), frame.end());
  // Block 1 of frame 1: after frame 1's 7-byte header and block 0 (size word, data, checksum).
  const std::size_t block0 = opkit::ops::lz4::read_le32(&stream[second + 7]) & 0x7FFFFFFF;
  const std::size_t block1 = second + 7 + 4 + block0 + 4;
  Bytes bad = stream;
  bad[block1 + 10] ^= 0x55;
  EXPECT_EQ(decode_error(bad), "frame 1, block 1 (input byte " + std::to_string(block1) +
                                   "): " + decode_error(bad).substr(decode_error(bad).find("block checksum")));
  EXPECT_NE(decode_error(bad).find("block checksum"), std::string::npos);
  EXPECT_NE(decode_error(Bytes{1, 2, 3, 4, 5}).find("frame 0 (input byte 0)"), std::string::npos);
}

TEST(Lz4Frame, OutputLimitStopsDecoding) {
  const Bytes zeros(3 << 20, 0);
  const Bytes frame = compress(zeros);
  Lz4DecompressOptions o;
  o.max_output = 1 << 20;
  EXPECT_NE(decode_error(frame, o).find("max_output"), std::string::npos);
  Lz4CompressOptions with_size;
  with_size.content_size = true;
  EXPECT_NE(decode_error(compress(zeros, with_size), o).find("content size"), std::string::npos);
  o.max_output = zeros.size();
  EXPECT_EQ(decompress(frame, o), zeros);
}

TEST(Lz4Frame, LyingContentSizeIsAnError) {
  const Bytes data = text_bytes(5000, 6);
  Lz4CompressOptions o;
  o.content_size = true;
  Bytes frame = compress(data, o);
  frame[6] ^= 1;  // the content size's low byte, then a matching header checksum
  frame[14] = static_cast<std::uint8_t>(XXH32(&frame[4], 10, 0) >> 8);
  EXPECT_NE(decode_error(frame).find("content size field says"), std::string::npos);
}

TEST(Lz4Frame, RefusesDictionaryIdsAndReservedBits) {
  Bytes frame = compress(Bytes{});
  frame[4] |= 0x02;  // reserved FLG bit
  frame[6] = static_cast<std::uint8_t>(XXH32(&frame[4], 2, 0) >> 8);
  EXPECT_NE(decode_error(frame).find("reserved"), std::string::npos);
  Bytes dict = {0x04, 0x22, 0x4D, 0x18, 0x41, 0x40, 1, 2, 3, 4};
  dict.push_back(static_cast<std::uint8_t>(XXH32(&dict[4], 6, 0) >> 8));
  EXPECT_NE(decode_error(dict).find("dictionary"), std::string::npos);
}

// The stream decoder given its input in random pieces (the caller keeps what a call leaves and
// appends the next piece) decodes every kind of frame liblz4 writes to the same bytes, with
// small batches; and it fails on every truncation the whole-buffer decoder fails on.
Bytes decode_in_pieces(const Bytes& frames, std::mt19937& rng, std::size_t batch) {
  Bytes out;
  opkit::ops::Lz4StreamDecoder decoder(
      {}, [&out](std::span<const std::uint8_t> b) { out.insert(out.end(), b.begin(), b.end()); }, batch);
  Bytes window;
  std::size_t at = 0;
  while (true) {
    const std::size_t n = std::min<std::size_t>(frames.size() - at, 1 + rng() % 300000);
    window.insert(window.end(), frames.begin() + static_cast<std::ptrdiff_t>(at),
                  frames.begin() + static_cast<std::ptrdiff_t>(at + n));
    at += n;
    const bool last = at == frames.size();
    const std::size_t done = decoder.decode(window, last);
    window.erase(window.begin(), window.begin() + static_cast<std::ptrdiff_t>(done));
    if (last) break;
  }
  EXPECT_TRUE(window.empty());
  EXPECT_EQ(decoder.consumed(), frames.size());
  EXPECT_EQ(decoder.produced(), out.size());
  return out;
}

TEST(Lz4Frame, StreamDecoderTakesAnyPiecesOfEveryFrameKind) {
  const std::uint32_t seed = std::random_device()();
  std::mt19937 rng(seed);
  const Bytes data = periodic_bytes(3000000, seed);
  Bytes stream, expected;
  for (const FramePrefs& p : every_frame_kind()) {
    const Bytes frame = liblz4_compress(data, p);
    EXPECT_EQ(decode_in_pieces(frame, rng, 1 << 20), data) << "seed " << seed << " " << describe(p);
    if (p.linked && p.content_size && !p.block_checksum) {  // one frame of each block size in the stream
      stream.insert(stream.end(), frame.begin(), frame.end());
      expected.insert(expected.end(), data.begin(), data.end());
    }
  }
  const Bytes skippable = {0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 9, 9, 9};
  stream.insert(stream.end(), skippable.begin(), skippable.end());
  const Bytes legacy = legacy_frame(text_bytes(9000000, seed));
  stream.insert(stream.end(), legacy.begin(), legacy.end());
  const Bytes tail = text_bytes(9000000, seed);
  expected.insert(expected.end(), tail.begin(), tail.end());
  EXPECT_EQ(decode_in_pieces(stream, rng, 4 << 20), expected) << "seed " << seed;
  for (std::size_t n = 1; n < stream.size(); n += 1 + rng() % 400000)
    EXPECT_THROW(decode_in_pieces(Bytes(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(n)), rng, 1 << 20),
                 opkit::Error)
        << n;
}

// The frame writer fed whole blocks at a time writes the frame lz4_compress writes in one go.
TEST(Lz4Frame, FrameWriterInPiecesWritesTheOneShotFrame) {
  const Bytes data = text_bytes(5000000, std::random_device()());
  Lz4CompressOptions o;
  o.block_checksums = true;
  o.content_size = true;
  opkit::ops::Lz4FrameWriter writer(o, data.size());
  Bytes frame;
  for (std::size_t at = 0; at < data.size(); at += 3 * writer.block_bytes())
    writer.write(std::span<const std::uint8_t>(data).subspan(at, std::min(3 * writer.block_bytes(), data.size() - at)),
                 frame);
  writer.finish(frame);
  EXPECT_EQ(frame, compress(data, o));
  EXPECT_EQ(liblz4_decompress(frame), data);
  opkit::ops::Lz4FrameWriter short_writer(o, data.size() + 1);  // declares a byte more than it gets
  Bytes out;
  short_writer.write(data, out);
  EXPECT_THROW(short_writer.finish(out), opkit::Error);
}

}  // namespace
