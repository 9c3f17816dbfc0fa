// The LZ4 kernel sources: they compile under NVRTC (no GPU needed) and run on the CPU backend,
// where they must agree with liblz4: the compressor's blocks decode with liblz4 to the input, at
// a ratio within 3% of LZ4_compress_fast's (its parse is its own: 32 positions a round, and a
// serial one at one thread a block, the CPU backend's default), the decompressor's output with
// liblz4's frame API, xxHash32 with libxxhash; and hostile frames must fail with an error, never
// a fault.
#include <gtest/gtest.h>
#include <xxhash.h>

#include "lz4/block_codec.hpp"
#include "lz4/device_lz4.hpp"
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
  for (int hash_log : {12, 13}) {  // the compressor's variant for blocks under 64 KiB + 11 bytes
    auto compiled = opkit::compile(opkit::ops::lz4::kernel_program("lz4_compress.cu")
                                       .define("LZ4K_SMALL_BLOCKS_ONLY")
                                       .define("LZ4K_SMALL_HASH_LOG", hash_log),
                                   opkit::Target::cuda("sm_90"));
    EXPECT_FALSE(compiled.binary.empty()) << hash_log;
  }
}

using Generator = Bytes (*)(std::size_t, std::uint32_t);

Bytes zero_bytes(std::size_t n, std::uint32_t) {
  return Bytes(n, 0);
}

constexpr Generator every_kind_of_data[] = {random_bytes, text_bytes, periodic_bytes, binary_bytes, zero_bytes};

TEST(Lz4Kernels, CompressorFramesDecodeWithLiblz4) {
  for (Generator gen : every_kind_of_data)
    for (std::size_t n : boundary_sizes()) {
      const Bytes data = gen(n, static_cast<std::uint32_t>(n) + 1);
      const Bytes frame = opkit::ops::lz4_compress(data, on_cpu_backend());
      EXPECT_EQ(liblz4_decompress(frame), data) << n;
      EXPECT_EQ(opkit::ops::lz4_decompress(frame, decode_on_cpu_backend()), data) << n;
      EXPECT_EQ(opkit::ops::lz4_compress(data, on_cpu_backend()), frame) << n << ": the same input, another frame";
    }
}

// The compressor's blocks at `threads` threads a block (32: the GPU's parse, here on the CPU
// backend), each checked against liblz4's block decoder: a compressed block decodes to its input
// and is smaller than it, a raw one is the input. Returns the bytes stored in all.
std::size_t compressed_bytes_checked(const Bytes& data, std::size_t block_bytes, unsigned threads,
                                     unsigned small_hash_log = 13) {
  namespace lz4 = opkit::ops::lz4;
  const opkit::Device cpu = opkit::Device::cpu();
  const lz4::DeviceLz4 engine(cpu, small_hash_log, threads);
  auto in = cpu.alloc<std::uint8_t>(std::max<std::size_t>(data.size(), 1));
  if (!data.empty()) in.view().subview(0, data.size()).copy_from(data);
  std::vector<unsigned long long> in_at;
  std::vector<std::uint32_t> in_len;
  for (std::size_t at = 0; at == 0 || at < data.size(); at += block_bytes) {
    in_at.push_back(at);
    in_len.push_back(static_cast<std::uint32_t>(std::min(block_bytes, data.size() - at)));
  }
  const lz4::DeviceLz4::Compressed c = engine.compress(engine.blocks(in.data(), in_at, in_len), false);
  const Bytes slots = c.slots.to_host();
  std::size_t total = 0;
  for (std::size_t i = 0; i < in_at.size(); ++i) {
    const std::uint32_t stored = c.host_words[i] & ~lz4::uncompressed_bit;
    const std::uint8_t* block = slots.data() + i * c.slot_bytes;
    const Bytes expected(data.begin() + static_cast<std::ptrdiff_t>(in_at[i]),
                         data.begin() + static_cast<std::ptrdiff_t>(in_at[i] + in_len[i]));
    total += stored;
    if (c.host_words[i] & lz4::uncompressed_bit) {
      EXPECT_EQ(stored, in_len[i]) << "block " << i;
      EXPECT_TRUE(std::equal(expected.begin(), expected.end(), block)) << "raw block " << i;
      continue;
    }
    EXPECT_LT(stored, in_len[i]) << "block " << i;
    Bytes out(in_len[i] + 1);
    const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(block), reinterpret_cast<char*>(out.data()),
                                      static_cast<int>(stored), static_cast<int>(out.size()));
    EXPECT_EQ(n, static_cast<int>(in_len[i])) << "block " << i << " of " << in_len[i] << " bytes";
    out.resize(static_cast<std::size_t>(std::max(n, 0)));
    EXPECT_EQ(out, expected) << "block " << i << " of " << in_len[i] << " bytes";
  }
  return total;
}

// What liblz4 (LZ4_compress_fast, acceleration 1, as `lz4 -1`) stores for the same blocks.
std::size_t liblz4_block_bytes(const Bytes& data, std::size_t block_bytes) {
  std::size_t total = 0;
  Bytes out(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(block_bytes))));
  for (std::size_t at = 0; at < data.size(); at += block_bytes) {
    const int n = static_cast<int>(std::min(block_bytes, data.size() - at));
    const int stored = LZ4_compress_fast(reinterpret_cast<const char*>(data.data() + at),
                                         reinterpret_cast<char*>(out.data()), n, static_cast<int>(out.size()), 1);
    total += static_cast<std::size_t>(std::min(stored, n));
  }
  return total;
}

TEST(Lz4Kernels, ThirtyTwoThreadParseDecodesWithLiblz4AtEveryBlockSize) {
  const std::size_t k = 65536;
  for (Generator gen : every_kind_of_data) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{12}, std::size_t{13}, std::size_t{14},
                          std::size_t{100}, k - 1, k, k + 10, k + 11, k + 12, 4 * k + 1})
      compressed_bytes_checked(gen(n, static_cast<std::uint32_t>(n) + 3), 4 << 20, 32);
    const Bytes data = gen((1 << 20) + 333, 5);  // one 1 MiB block at 4 MiB: offsets past 65535
    for (std::size_t block : {k, 4 * k, std::size_t{4} << 20}) compressed_bytes_checked(data, block, 32);
    compressed_bytes_checked(data, k, 32, 12);
  }
}

// Text-like and binary-like data at 64 KiB blocks (the 16-bit table, 8192 or 4096 entries) and
// 256 KiB blocks (the 32-bit table): within 3% of liblz4's bytes, at the GPU's 32 threads and the
// CPU backend's one.
TEST(Lz4Kernels, CompressorRatioWithinThreePercentOfLiblz4) {
  for (Generator gen : {text_bytes, binary_bytes}) {
    const Bytes data = gen(4 << 20, 21);
    for (std::size_t block : {std::size_t{65536}, std::size_t{262144}}) {
      const double theirs = static_cast<double>(liblz4_block_bytes(data, block));
      for (unsigned threads : {1u, 32u})
        for (unsigned hash_log : {13u, 12u}) {
          if (hash_log == 12 && block != 65536) continue;
          const double ours = static_cast<double>(compressed_bytes_checked(data, block, threads, hash_log));
          EXPECT_LT(ours, 1.03 * theirs) << block << "-byte blocks, " << threads << " threads, table 2^" << hash_log;
          EXPECT_LT(theirs, 0.9 * static_cast<double>(data.size()));  // the data compresses at all
        }
    }
  }
}

TEST(Lz4Kernels, LargeBlocksUseTheWideTableNearLiblz4) {
  const Bytes data = text_bytes(600000, 4);
  Lz4CompressOptions o = on_cpu_backend(Lz4BlockSize::kib256);
  o.block_checksums = true;
  o.content_size = true;
  const Bytes frame = opkit::ops::lz4_compress(data, o);
  EXPECT_EQ(liblz4_decompress(frame), data);
  FramePrefs p;
  p.block_size_id = 5;
  p.block_checksum = true;
  p.content_size = true;
  EXPECT_LT(static_cast<double>(frame.size()), 1.03 * static_cast<double>(liblz4_compress(data, p).size()));
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
