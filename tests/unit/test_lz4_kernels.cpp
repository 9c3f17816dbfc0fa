// The LZ4 kernel sources: they compile under NVRTC (no GPU needed) and run on the CPU backend,
// where they must agree with liblz4: the compressor's output byte for byte with
// LZ4_compress_fast (same parse), the decompressor's with liblz4's frame API, xxHash32 with
// libxxhash; and hostile frames must fail with an error, never a fault.
#include <gtest/gtest.h>
#include <xxhash.h>

#include "lz4/block_codec.hpp"
#include "nvrtc_required.hpp"
#include "opkit/buffer.hpp"
#include "opkit/error.hpp"
#include "opkit/module.hpp"
#include "opkit/nvrtc.hpp"
#include "opkit/ops/lz4.hpp"
#include "opkit/target.hpp"
#include "unit/lz4_test_data.hpp"

namespace {

using namespace opkit::test;
using opkit::ops::Lz4BlockSize;
using opkit::ops::Lz4CompressOptions;
using opkit::ops::Lz4DecompressOptions;

Lz4CompressOptions on_cpu_backend(Lz4BlockSize size = Lz4BlockSize::kib64) {
  Lz4CompressOptions o;
  o.device = opkit::Device::cpu();
  o.block_size = size;
  return o;
}

Lz4DecompressOptions decode_on_cpu_backend() {
  Lz4DecompressOptions o;
  o.device = opkit::Device::cpu();
  return o;
}

TEST(Lz4Kernels, EveryKernelCompilesUnderNvrtc) {
  OPKIT_REQUIRE_NVRTC();
  for (const char* file : {"lz4_compress.cu", "lz4_decompress.cu", "lz4_xxh32.cu", "lz4_gather.cu", "lz4_scatter.cu",
                           "lz4_frame_scan.cu"}) {
    auto compiled = opkit::compile(opkit::ops::lz4::kernel_program(file), opkit::Target::cuda("sm_90"));
    EXPECT_FALSE(compiled.binary.empty()) << file;
  }
}

TEST(Lz4Kernels, CompressorMatchesLiblz4ByteForByteAndRoundTrips) {
  using Generator = Bytes (*)(std::size_t, std::uint32_t);
  for (Generator gen : {random_bytes, text_bytes, periodic_bytes})
    for (std::size_t n : boundary_sizes()) {
      const Bytes data = gen(n, static_cast<std::uint32_t>(n) + 1);
      const Bytes frame = opkit::ops::lz4_compress(data, on_cpu_backend());
      Lz4CompressOptions host;
      EXPECT_EQ(frame, opkit::ops::lz4_compress(data, host)) << n;
      EXPECT_EQ(liblz4_decompress(frame), data) << n;
      EXPECT_EQ(opkit::ops::lz4_decompress(frame, decode_on_cpu_backend()), data) << n;
    }
}

TEST(Lz4Kernels, LargeBlocksUseTheWideTableAndMatchLiblz4) {
  const Bytes data = text_bytes(600000, 4);
  Lz4CompressOptions o = on_cpu_backend(Lz4BlockSize::kib256);
  o.block_checksums = true;
  o.content_size = true;
  const Bytes frame = opkit::ops::lz4_compress(data, o);
  EXPECT_EQ(liblz4_decompress(frame), data);
  Lz4CompressOptions host = o;
  host.device.reset();
  EXPECT_EQ(frame, opkit::ops::lz4_compress(data, host));
  FramePrefs p;
  p.block_size_id = 5;
  p.block_checksum = true;
  p.content_size = true;
  EXPECT_LT(static_cast<double>(frame.size()), 1.01 * static_cast<double>(liblz4_compress(data, p).size()));
}

TEST(Lz4Kernels, DecompressorReadsLiblz4FramesWithChecksums) {
  for (int id : {4, 5})
    for (bool checksums : {false, true}) {
      FramePrefs p;
      p.block_size_id = id;
      p.block_checksum = checksums;
      const Bytes data = periodic_bytes(400000, static_cast<std::uint32_t>(id));
      EXPECT_EQ(opkit::ops::lz4_decompress(liblz4_compress(data, p), decode_on_cpu_backend()), data);
    }
}

TEST(Lz4Kernels, Xxh32KernelMatchesLibxxhash) {
  opkit::Device cpu = opkit::Device::cpu();
  const Bytes data = random_bytes(5000, 9);
  std::vector<unsigned long long> offsets;
  std::vector<std::uint32_t> lengths;
  for (std::uint32_t len : {0u, 1u, 3u, 4u, 15u, 16u, 17u, 31u, 32u, 33u, 100u, 1000u, 4999u}) {
    offsets.push_back(len % 7);
    lengths.push_back(len);
  }
  auto d_data = cpu.alloc<std::uint8_t>(data.size());
  d_data.copy_from(data);
  auto d_offsets = cpu.alloc<unsigned long long>(offsets.size());
  d_offsets.copy_from(offsets);
  auto d_lengths = cpu.alloc<std::uint32_t>(lengths.size());
  d_lengths.copy_from(lengths);
  auto d_hashes = cpu.alloc<std::uint32_t>(lengths.size());
  cpu.compile(opkit::ops::lz4::kernel_program("lz4_xxh32.cu"))
      .kernel("lz4_xxh32")
      .launch({.grid = 1, .block = 32}, d_data, d_offsets, d_lengths, static_cast<unsigned long long>(lengths.size()),
              d_hashes);
  const std::vector<std::uint32_t> hashes = d_hashes.to_host();
  for (std::size_t i = 0; i < lengths.size(); ++i)
    EXPECT_EQ(hashes[i], XXH32(data.data() + offsets[i], lengths[i], 0)) << lengths[i];
}

// Mutated frames: an opkit::Error or liblz4's answer; block checksums off (and the content
// checksum off for some) so that corrupt blocks reach the kernel's bounds checks.
TEST(Lz4Kernels, MutatedFramesFailCleanlyOnTheCpuBackend) {
  std::mt19937 rng(77);
  const Bytes data = text_bytes(3000, 12);
  FramePrefs p;
  p.content_checksum = false;
  const Bytes frame = liblz4_compress(data, p);
  int rejected = 0;
  for (int round = 0; round < 300; ++round) {
    Bytes mutant = frame;
    mutant[7 + 4 + rng() % (mutant.size() - 15)] ^= static_cast<std::uint8_t>(1 + rng() % 255);
    const std::optional<Bytes> reference = liblz4_decompress(mutant);
    try {
      const Bytes ours = opkit::ops::lz4_decompress(mutant, decode_on_cpu_backend());
      ASSERT_TRUE(reference.has_value()) << "round " << round << ": opkit accepts what liblz4 rejects";
      EXPECT_EQ(ours, *reference);
    } catch (const opkit::Error& e) {
      EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument) << e.what();
      EXPECT_NE(e.message().find("frame 0, block 0"), std::string::npos) << e.message();
      EXPECT_FALSE(reference.has_value()) << "round " << round << ": liblz4 accepts, opkit says " << e.message();
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 100);
}

}  // namespace
