// LZ4 frames on every target against liblz4 (the frame API, independent of opkit's codec): the
// host-data API (the operator's kernels on each device, liblz4 on host), and on devices the
// device-memory API, one buffer and batches. Frames opkit writes decode with liblz4 byte for
// byte; frames liblz4 writes (every block size, linked blocks, block and content checksums,
// content size, legacy `lz4 -l` frames, concatenated and skippable frames) decode to the data;
// truncated and mutated frames give an opkit::Error, never a crash or a wrong answer.
#include <gtest/gtest.h>

#include <xxhash.h>

#include <cstdlib>
#include <random>
#include <string>

#include "conformance/devices.hpp"
#include "lz4/content_checksum.hpp"
#include "opkit/buffer.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/lz4.hpp"
#include "unit/lz4_test_data.hpp"

namespace {

using opkit::ops::Lz4BlockSize;
using opkit::ops::Lz4CompressOptions;
using opkit::ops::Lz4DecompressOptions;
using opkit::test::Bytes;
using namespace opkit::test;

OPKIT_CONFORMANCE_OPERATOR_SUITE(Lz4, opkit::ops::lz4_support());

// A fresh seed each run (failures print it); OPKIT_TEST_SEED=N replays one.
std::uint32_t fresh_seed() {
  if (const char* fixed = std::getenv("OPKIT_TEST_SEED"))
    return static_cast<std::uint32_t>(std::strtoul(fixed, nullptr, 10));
  return std::random_device()();
}

opkit::DeviceBuffer<std::uint8_t> upload(const opkit::Device& device, const Bytes& host) {
  auto buffer = device.alloc<std::uint8_t>(host.size());
  if (!host.empty()) buffer.copy_from(host);
  return buffer;
}

Bytes to_host(opkit::BufferView<const std::uint8_t> view) {
  Bytes host(view.size());
  if (!host.empty()) view.copy_to(std::span<std::uint8_t>(host));
  return host;
}

// The host-data API on the target.
Bytes compress_on(const Target& t, const Bytes& data, Lz4CompressOptions o = {}) {
  o.device = t.device;
  return opkit::ops::lz4_compress(data, o);
}
Bytes decompress_on(const Target& t, const Bytes& frames, Lz4DecompressOptions o = {}) {
  o.device = t.device;
  return opkit::ops::lz4_decompress(frames, o);
}

// The error message decoding `frames` gives on the target, through the device API on devices
// (and the host-data API everywhere); empty when it decodes. The device API finds the block index
// on the device (lz4_frame_scan.cu) and must give the host's message word for word (the inputs
// here are single frames of independent blocks, which both check in the same order).
std::string decode_error(const Target& t, const Bytes& frames) {
  std::string message;
  try {
    decompress_on(t, frames);
  } catch (const opkit::Error& e) {
    message = e.message();
  }
  if (t.device) {
    std::string device_message;
    try {
      (void)opkit::ops::lz4_decompress(upload(*t.device, frames));
    } catch (const opkit::Error& e) {
      device_message = e.message();
    }
    EXPECT_EQ(device_message, message);
  }
  return message;
}

std::vector<Bytes> inputs(std::uint32_t seed) {
  std::vector<Bytes> out;
  for (std::size_t n : boundary_sizes()) out.push_back(text_bytes(n, seed + static_cast<std::uint32_t>(n)));
  out.push_back(random_bytes(200000, seed + 1));    // incompressible: raw blocks
  out.push_back(periodic_bytes(300000, seed + 2));  // overlapping matches, offsets 1..16
  out.push_back(Bytes(150000, 0x5A));               // one long run
  return out;
}

TEST_P(Lz4, FramesItWritesDecodeWithLiblz4) {
  const std::uint32_t seed = fresh_seed();
  for (const Bytes& data : inputs(seed)) {
    for (int flags = 0; flags < 4; ++flags) {
      Lz4CompressOptions o;
      o.block_checksums = flags & 1;
      o.content_size = flags & 2;
      const Bytes frame = compress_on(target(), data, o);
      EXPECT_EQ(liblz4_decompress(frame), data) << "seed " << seed << ", " << data.size() << " bytes";
      EXPECT_EQ(decompress_on(target(), frame), data);
    }
  }
}

TEST_P(Lz4, DecodesEveryFrameLiblz4Writes) {
  const std::uint32_t seed = fresh_seed();
  const Bytes data = periodic_bytes(700000, seed);
  for (const FramePrefs& p : every_frame_kind())
    EXPECT_EQ(decompress_on(target(), liblz4_compress(data, p)), data) << "seed " << seed << " " << describe(p);
}

TEST_P(Lz4, DecodesLegacyConcatenatedAndSkippableFrames) {
  const Bytes a = text_bytes((8 << 20) + 3000, fresh_seed()), b = text_bytes(5000, 2);
  Bytes stream = legacy_frame(a);
  const Bytes skippable = {0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 9, 9, 9};
  stream.insert(stream.end(), skippable.begin(), skippable.end());
  const Bytes next = liblz4_compress(b, FramePrefs{});
  stream.insert(stream.end(), next.begin(), next.end());
  Bytes expected = a;
  expected.insert(expected.end(), b.begin(), b.end());
  EXPECT_EQ(decompress_on(target(), stream), expected);
}

TEST_P(Lz4, DeviceBuffersInAndOut) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory");
  const std::uint32_t seed = fresh_seed();
  for (const Bytes& data : inputs(seed)) {
    Lz4CompressOptions o;
    o.block_checksums = true;
    o.content_size = data.size() % 2 == 0;
    const auto frame = opkit::ops::lz4_compress(upload(device, data), o);
    const Bytes host_frame = to_host(frame);
    EXPECT_EQ(liblz4_decompress(host_frame), data) << "seed " << seed;
    EXPECT_EQ(host_frame, compress_on(target(), data, o));  // the same kernels, the same frame
    EXPECT_EQ(opkit::ops::lz4_content_size(host_frame),
              o.content_size ? std::optional<std::uint64_t>(data.size()) : std::nullopt);
    EXPECT_EQ(to_host(opkit::ops::lz4_decompress(frame)), data);
  }
  FramePrefs linked;
  linked.linked = true;
  linked.block_checksum = true;
  const Bytes data = text_bytes(400000, seed);
  EXPECT_EQ(to_host(opkit::ops::lz4_decompress(upload(device, liblz4_compress(data, linked)))), data);
  EXPECT_EQ(to_host(opkit::ops::lz4_decompress(upload(device, legacy_frame(data)))), data);
}

// Content checksums of device data come down in 8 MiB chunks, the next copied while the last is
// hashed (lz4/content_checksum.hpp): one chunk exactly, one byte more, and three with a short
// tail, written (liblz4 checks them) and checked (a flipped checksum fails, naming it).
TEST_P(Lz4, DeviceContentChecksumsOverSeveralChunks) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory");
  const std::uint32_t seed = fresh_seed();
  const std::size_t chunk = opkit::ops::lz4::content_checksum_chunk_bytes;
  for (std::size_t n : {chunk, chunk + 1, 2 * chunk + 12345}) {
    const Bytes data = text_bytes(n, seed + static_cast<std::uint32_t>(n));
    const Bytes frame = to_host(opkit::ops::lz4_compress(upload(device, data)));
    EXPECT_EQ(liblz4_decompress(frame, 3 * chunk), data) << "seed " << seed << ", " << n << " bytes";
    const Bytes theirs = liblz4_compress(data, FramePrefs{});  // content checksum on
    EXPECT_EQ(to_host(opkit::ops::lz4_decompress(upload(device, theirs))), data) << n << " bytes";
    Bytes forged = theirs;
    forged.back() ^= 0x01;  // the content checksum is the frame's last 4 bytes
    try {
      (void)opkit::ops::lz4_decompress(upload(device, forged));
      ADD_FAILURE() << "a wrong content checksum was accepted (" << n << " bytes)";
    } catch (const opkit::Error& e) {
      EXPECT_NE(e.message().find("content checksum"), std::string::npos) << e.message();
    }
  }
}

TEST_P(Lz4, DeviceBatchesGiveOneFramePerBuffer) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory");
  const std::vector<Bytes> data = inputs(fresh_seed());
  Bytes all;  // the items as subviews of one buffer: the data + offsets form
  std::vector<std::size_t> at{0};
  for (const Bytes& d : data) {
    all.insert(all.end(), d.begin(), d.end());
    at.push_back(all.size());
  }
  const auto d_all = upload(device, all);
  std::vector<opkit::BufferView<const std::uint8_t>> items;
  for (std::size_t i = 0; i < data.size(); ++i) items.push_back(d_all.view().subview(at[i], at[i + 1] - at[i]));
  const opkit::ops::Lz4Batch frames = opkit::ops::lz4_compress_batch(items);
  ASSERT_EQ(frames.size(), data.size());
  std::vector<opkit::BufferView<const std::uint8_t>> frame_views;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(liblz4_decompress(to_host(frames.item(i))), data[i]) << "item " << i;
    frame_views.push_back(frames.item(i));
  }
  const opkit::ops::Lz4Batch back = opkit::ops::lz4_decompress_batch(frame_views);
  ASSERT_EQ(back.size(), data.size());
  for (std::size_t i = 0; i < back.size(); ++i) EXPECT_EQ(to_host(back.item(i)), data[i]) << "item " << i;

  Bytes bad = to_host(frames.item(3));
  bad[bad.size() - 1] ^= 1;  // its content checksum
  const auto d_bad = upload(device, bad);
  frame_views[3] = d_bad.view();
  try {
    (void)opkit::ops::lz4_decompress_batch(frame_views);
    ADD_FAILURE() << "a wrong content checksum decoded";
  } catch (const opkit::Error& e) {
    EXPECT_NE(e.message().find("batch item 3: frame 0"), std::string::npos) << e.message();
  }
}

TEST_P(Lz4, TruncatedFramesAreErrors) {
  for (const Bytes& data : {text_bytes(300, 1), periodic_bytes(70000, fresh_seed())}) {
    Lz4CompressOptions o;
    o.block_checksums = true;
    o.content_size = true;
    const Bytes frame = compress_on(target(), data, o);
    for (std::size_t n = 1; n < frame.size(); n += (n < 64 || frame.size() - n < 64) ? 1 : 997)
      EXPECT_NE(decode_error(target(), Bytes(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(n))), "") << n;
  }
}

// A mutated frame fails with an opkit::Error or decodes to exactly what liblz4 makes of it.
TEST_P(Lz4, MutatedFramesFailCleanlyOrAgreeWithLiblz4) {
  const std::uint32_t seed = fresh_seed();
  std::mt19937 rng(seed);
  FramePrefs p;
  p.content_checksum = false;  // let mutated blocks reach the block decoder
  for (const Bytes& data : {text_bytes(3000, seed), periodic_bytes(200000, seed)}) {
    const Bytes frame = liblz4_compress(data, p);
    for (int round = 0; round < 60; ++round) {
      Bytes mutant = frame;
      for (int k = 1 + static_cast<int>(rng() % 4); k > 0; --k)
        mutant[7 + rng() % (mutant.size() - 7)] = static_cast<std::uint8_t>(rng());  // past the header
      const std::string error = decode_error(target(), mutant);
      const std::optional<Bytes> reference = liblz4_decompress(mutant);
      if (error.empty()) {
        ASSERT_TRUE(reference.has_value()) << "seed " << seed << " round " << round << ": accepted what liblz4 rejects";
        EXPECT_EQ(decompress_on(target(), mutant), *reference);
      } else if (error.find("offset of 0") == std::string::npos) {  // liblz4 accepts offset 0, the format does not
        EXPECT_FALSE(reference.has_value()) << "seed " << seed << " round " << round << ": " << error;
      }
    }
  }
}

TEST_P(Lz4, OutputLimitAndLyingContentSize) {
  const Bytes data(1 << 20, 7);
  Lz4CompressOptions o;
  o.content_size = true;
  Bytes frame = compress_on(target(), data, o);
  Lz4DecompressOptions small;
  small.max_output = 1000;
  EXPECT_THROW(decompress_on(target(), frame, small), opkit::Error);
  frame[6] ^= 1;  // content size, then the header checksum no longer matches
  EXPECT_NE(decode_error(target(), frame), "");
  if (target().device) {
    small.max_output = 1000;
    EXPECT_THROW((void)opkit::ops::lz4_decompress(upload(*target().device, compress_on(target(), data)), small),
                 opkit::Error);
  }
}

// Oversized claims: a content size far past the limit, a block word past the frame's maximum, a
// block longer than the input, endless blocks that outgrow max_output; errors, no allocation
// of what they claim, on every target and through the device API (where a batch names the item).
TEST_P(Lz4, OversizedClaimsAreErrors) {
  const Bytes data = text_bytes(200000, fresh_seed());
  const Bytes frame = compress_on(target(), data);
  Bytes huge_size = {0x04, 0x22, 0x4D, 0x18, 0x68, 0x40, 0, 0, 0, 0, 0, 0, 0, 0x40};  // 2^62 bytes declared
  huge_size.push_back(static_cast<std::uint8_t>(XXH32(&huge_size[4], 10, 0) >> 8));
  huge_size.insert(huge_size.end(), frame.begin() + 7, frame.end() - 4);  // the blocks and end mark
  EXPECT_NE(decode_error(target(), huge_size).find("exceeds the output limit"), std::string::npos);
  Bytes past_max = frame;
  past_max[7] = 0xFF, past_max[8] = 0xFF, past_max[9] = 0x01, past_max[10] = 0x00;  // 128 KiB in a 64 KiB frame
  EXPECT_NE(decode_error(target(), past_max).find("exceeds the frame's maximum"), std::string::npos);
  Bytes past_end = Bytes(frame.begin(), frame.begin() + 7);
  for (std::uint8_t b : {0x00, 0x00, 0x01, 0x00, 0x11, 0x22}) past_end.push_back(b);  // 64 KiB word, 2 bytes
  EXPECT_NE(decode_error(target(), past_end).find("truncated: block data"), std::string::npos);
  Bytes endless(frame.begin(), frame.end() - 8);  // no end mark: blocks repeated
  for (int i = 0; i < 40; ++i) endless.insert(endless.end(), frame.begin() + 7, frame.end() - 8);
  Lz4DecompressOptions small;
  small.max_output = 4 * data.size();
  EXPECT_THROW(decompress_on(target(), endless, small), opkit::Error);
  if (target().device) {
    EXPECT_THROW((void)opkit::ops::lz4_decompress(upload(*target().device, endless), small), opkit::Error);
    const auto good = upload(*target().device, frame), bad = upload(*target().device, past_max);
    const std::vector<opkit::BufferView<const std::uint8_t>> items = {good.view(), bad.view()};
    try {
      (void)opkit::ops::lz4_decompress_batch(items);
      ADD_FAILURE() << "an oversized block decoded";
    } catch (const opkit::Error& e) {
      EXPECT_NE(e.message().find("batch item 1: frame 0, block 0"), std::string::npos) << e.message();
    }
  }
}

}  // namespace
