// The portable kernel headers (sha256_core.cuh, sha256_io.cuh) compiled by the host compiler:
// the same code the GPU and the CPU backend run, checked against OpenSSL piece by piece.
#include <gtest/gtest.h>

#include <random>

#include "ops/sha256/kernels/sha256_io.cuh"
#include "unit/test_sha256_reference.hpp"

namespace {

using namespace opkit::test;

// SHA-256 of one message with the kernels' building blocks: whole blocks through the unaligned
// block loader, then the tail words, as sha256_var.cu does.
opkit::ops::Sha256Digest core_sha256(const unsigned char* begin, const unsigned char* end, const unsigned char* m,
                                     unsigned long long len) {
  unsigned int state[8], w[16];
  sha256_init(state);
  const unsigned long long blocks = len / 64;
  for (unsigned long long b = 0; b < blocks; ++b) {
    sha256_load_block_unaligned(w, m + 64 * b, begin, end);
    sha256_compress(state, w);
  }
  const unsigned int tail_blocks = (len % 64) + 9 > 64 ? 2 : 1;
  for (unsigned int t = 0; t < tail_blocks; ++t) {
    const unsigned long long base = (blocks + t) * 64;
    for (int j = 0; j < 16; ++j) {
      const unsigned long long p = base + 4 * j;
      w[j] = p + 4 <= len ? sha256_load_be_unaligned(m + p, begin, end) : (p <= len ? sha256_tail_word(m, p, len) : 0);
    }
    if (t + 1 == tail_blocks) {
      w[14] = static_cast<unsigned int>((len * 8) >> 32);
      w[15] = static_cast<unsigned int>(len * 8);
    }
    sha256_compress(state, w);
  }
  opkit::ops::Sha256Digest digest{};
  sha256_store_digest(digest.data(), state, 1);
  return digest;
}

TEST(Sha256Core, CompressOfAbcBlockGivesTheFips180Digest) {
  unsigned int w[16] = {0x61626380u, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 24};
  unsigned int state[8];
  sha256_init(state);
  sha256_compress(state, w);
  EXPECT_EQ(state[0], 0xba7816bfu);
  EXPECT_EQ(state[7], 0xf20015adu);
}

TEST(Sha256Core, BytePermFallbackFollowsCudaSemantics) {
  // Selector 0x3210 is the identity on lo; 0x7654 is hi; 0x0123 byte-swaps lo; 0x1234 is the
  // big-endian word of bytes 1..4, the unaligned load at shift 1.
  EXPECT_EQ(sha256_byte_perm(0x33221100u, 0x77665544u, 0x3210u), 0x33221100u);
  EXPECT_EQ(sha256_byte_perm(0x33221100u, 0x77665544u, 0x7654u), 0x77665544u);
  EXPECT_EQ(sha256_byte_perm(0x33221100u, 0x77665544u, 0x0123u), 0x00112233u);
  EXPECT_EQ(sha256_byte_perm(0x33221100u, 0x77665544u, 0x4321u), 0x44332211u);
  EXPECT_EQ(sha256_byte_perm(0x33221100u, 0x77665544u, 0x1234u), 0x11223344u);
}

TEST(Sha256Core, UnalignedLoadsReadTheRightBytesAtEveryShiftAndEdge) {
  std::mt19937_64 rng(std::random_device{}());
  alignas(16) unsigned char buffer[160];
  for (auto& b : buffer) b = static_cast<unsigned char>(rng());
  // Ranges that start and end at every alignment, so both the permute and the byte paths run.
  for (int lo = 0; lo < 8; ++lo)
    for (int hi = 152; hi < 160; ++hi)
      for (int p = lo; p + 64 <= hi; p += 5) {
        unsigned int w[16];
        sha256_load_block_unaligned(w, buffer + p, buffer + lo, buffer + hi);
        for (int j = 0; j < 16; ++j) ASSERT_EQ(w[j], sha256_load_be_bytes(buffer + p + 4 * j)) << p << " " << j;
      }
}

TEST(Sha256Core, CoreHashOfEveryLengthUpTo300AtEveryAlignmentMatchesOpenSsl) {
  std::mt19937_64 rng(std::random_device{}());
  std::vector<std::uint8_t> buffer = random_bytes(rng, 320);
  for (std::size_t len = 0; len <= 300; ++len)
    for (std::size_t at = 0; at + len <= buffer.size() && at < 4; ++at) {
      const unsigned char* begin = buffer.data() + at;  // the data range is exactly the message
      auto expected = reference_sha256(std::span<const std::uint8_t>(begin, len), opkit::ops::HashAlgo::sha256);
      ASSERT_EQ(hex(core_sha256(begin, begin + len, begin, len)), hex(expected)) << len << " at " << at;
    }
}

TEST(Sha256Core, HashOfThirtyTwoByteWordsMatchesSha256d) {
  std::mt19937_64 rng(std::random_device{}());
  auto message = random_bytes(rng, 80);
  auto first = reference_sha256(message, opkit::ops::HashAlgo::sha256);
  unsigned int words[8], state[8];
  for (int i = 0; i < 8; ++i) words[i] = sha256_load_be_bytes(first.data() + 4 * i);
  sha256_of_32(words, state);
  opkit::ops::Sha256Digest digest{};
  sha256_store_digest(digest.data(), state, 4);
  EXPECT_EQ(hex(digest), hex(reference_sha256(message, opkit::ops::HashAlgo::sha256d)));
}

}  // namespace
