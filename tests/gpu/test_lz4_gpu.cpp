// LZ4 on a CUDA GPU: the kernels' frames decode with liblz4 and on the GPU, at a size within 3%
// of the host engine's (the GPU's parse is its own, 32 positions a round), the same frame every
// time, and the compressor's blocks are the CPU backend's at 32 threads a block; GPU decoding of
// liblz4's frames, and hostile frames fail with an error (run this under compute-sanitizer
// memcheck on the GPU machine: bench/device/lz4.sh does).
#include <gtest/gtest.h>

#include <string>

#include "gpu/gpu_test.hpp"
#include "lz4/block_codec.hpp"
#include "lz4/device_lz4.hpp"
#include "opkit/buffer.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/lz4.hpp"
#include "unit/lz4_test_data.hpp"

namespace {

using namespace opkit::test;
using opkit::ops::Lz4BlockSize;
using opkit::ops::Lz4CompressOptions;
using opkit::ops::Lz4DecompressOptions;

TEST(Lz4Gpu, FramesRoundTripNearTheHostEngineAndRepeat) {
  OPKIT_SKIP_WITHOUT_GPU();
  using Generator = Bytes (*)(std::size_t, std::uint32_t);
  for (Generator gen : {random_bytes, text_bytes, periodic_bytes, binary_bytes})
    for (auto size : {Lz4BlockSize::kib64, Lz4BlockSize::kib256, Lz4BlockSize::mib4})
      for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{13}, std::size_t{65536}, std::size_t{65537},
                            std::size_t{20} << 20}) {
        const Bytes data = gen(n, static_cast<std::uint32_t>(n));
        Lz4CompressOptions o;
        o.block_size = size;
        o.block_checksums = true;
        const Bytes host = opkit::ops::lz4_compress(data, o);
        o.device = gpu;
        const Bytes frame = opkit::ops::lz4_compress(data, o);
        EXPECT_LE(static_cast<double>(frame.size()), 1.03 * static_cast<double>(host.size()) + 16) << n;
        EXPECT_EQ(opkit::ops::lz4_compress(data, o), frame) << n << ": the same input, another frame";
        Lz4DecompressOptions d;
        d.device = gpu;
        EXPECT_EQ(opkit::ops::lz4_decompress(frame, d), data) << n;
        EXPECT_EQ(liblz4_decompress(frame, std::size_t{64} << 20), data) << n;
      }
}

// The compressor's size words and stored bytes for `data` in blocks of block_bytes on `device`
// at `threads` threads and `blocks_per_cta` LZ4 blocks a thread block (0: the device's choice),
// the smaller table hashing `hash_bytes`.
std::pair<std::vector<std::uint32_t>, Bytes> compressed_blocks(const opkit::Device& device, const Bytes& data,
                                                               std::size_t block_bytes, unsigned threads,
                                                               unsigned blocks_per_cta = 0, unsigned hash_bytes = 4) {
  namespace lz4 = opkit::ops::lz4;
  const lz4::DeviceLz4 engine(device, lz4::DeviceLz4::default_small_table_entries, threads, blocks_per_cta, hash_bytes);
  auto in = device.alloc<std::uint8_t>(data.size());
  in.copy_from(data);
  std::vector<unsigned long long> in_at;
  std::vector<std::uint32_t> in_len;
  for (std::size_t at = 0; at < data.size(); at += block_bytes) {
    in_at.push_back(at);
    in_len.push_back(static_cast<std::uint32_t>(std::min(block_bytes, data.size() - at)));
  }
  const lz4::DeviceLz4::Compressed c = engine.compress(engine.blocks(in.data(), in_at, in_len), false);
  const Bytes slots = c.slots.to_host();
  Bytes stored;
  for (std::size_t i = 0; i < in_at.size(); ++i) {
    const auto at = slots.begin() + static_cast<std::ptrdiff_t>(i * c.slot_bytes);
    stored.insert(stored.end(), at, at + (c.host_words[i] & ~lz4::uncompressed_bit));
  }
  return {c.host_words, stored};
}

// lz4_compress.cu exchanges through warp intrinsics on a GPU and through shared memory on the CPU
// backend, with the same parse: the GPU's blocks (one warp each) are the CPU backend's at 32
// threads a block, byte for byte (the unit tests check the two forms against each other on the
// CPU backend, with the intrinsics emulated; this checks the real ones). 1021-byte blocks: more
// than DeviceLz4::full_table_max_blocks of them, so the smaller table's kernel. Odd block counts
// with two or four LZ4 blocks a thread block leave the last thread block warps without a block.
TEST(Lz4Gpu, CompressorBlocksAreTheCpuBackendsAtThirtyTwoThreads) {
  OPKIT_SKIP_WITHOUT_GPU();
  const opkit::Device cpu = opkit::Device::cpu();
  using Generator = Bytes (*)(std::size_t, std::uint32_t);
  for (Generator gen : {random_bytes, text_bytes, periodic_bytes, binary_bytes})
    for (std::size_t block : {std::size_t{65536}, std::size_t{65533}, std::size_t{262144}, std::size_t{1021}}) {
      const Bytes data = gen((std::size_t{1} << 20) + 333, static_cast<std::uint32_t>(block));
      for (unsigned hash_bytes : {4u, 5u}) {
        const auto theirs = compressed_blocks(cpu, data, block, 32, 0, hash_bytes);
        for (unsigned blocks_per_cta : {1u, 2u, 4u}) {
          const auto ours = compressed_blocks(gpu, data, block, 0, blocks_per_cta, hash_bytes);
          ASSERT_EQ(ours.first, theirs.first)
              << block << "-byte blocks, " << blocks_per_cta << " a thread block, " << hash_bytes << "-byte hash";
          EXPECT_EQ(ours.second, theirs.second)
              << block << "-byte blocks, " << blocks_per_cta << " a thread block, " << hash_bytes << "-byte hash";
        }
      }
    }
}

TEST(Lz4Gpu, DecodesLiblz4FramesOfEveryBlockSize) {
  OPKIT_SKIP_WITHOUT_GPU();
  const Bytes data = text_bytes(9 << 20, 5);
  for (int id = 4; id <= 7; ++id) {
    FramePrefs p;
    p.block_size_id = id;
    p.block_checksum = id % 2 == 0;
    Lz4DecompressOptions d;
    d.device = gpu;
    EXPECT_EQ(opkit::ops::lz4_decompress(liblz4_compress(data, p), d), data) << id;
  }
}

TEST(Lz4Gpu, MutatedFramesFailWithAnError) {
  OPKIT_SKIP_WITHOUT_GPU();
  std::mt19937 rng(99);
  FramePrefs p;
  p.content_checksum = false;
  const Bytes frame = liblz4_compress(text_bytes(1 << 20, 6), p);
  Lz4DecompressOptions d;
  d.device = gpu;
  for (int round = 0; round < 200; ++round) {
    Bytes mutant = frame;
    for (int k = 0; k < 3; ++k) mutant[11 + rng() % (mutant.size() - 15)] = static_cast<std::uint8_t>(rng());
    const std::optional<Bytes> reference = liblz4_decompress(mutant);
    try {
      EXPECT_EQ(opkit::ops::lz4_decompress(mutant, d), reference) << round;
    } catch (const opkit::Error& e) {
      EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument) << e.what();
      // opkit refuses a match offset of 0 (the block format forbids it); liblz4 1.9 copies from
      // the output position itself and carries on, so there the two may disagree.
      if (reference.has_value()) {
        EXPECT_NE(e.message().find("a match offset of 0"), std::string::npos) << round << ": " << e.message();
      }
    }
  }
}

}  // namespace
