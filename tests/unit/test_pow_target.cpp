// Proof-of-work host parts: targets (compact nBits, hex, leading-zero bits), comparisons, the
// block-header codec, the reference hashes, the mining plan (midstates through the host
// compression, tests/unit/test_sha256_compress.cpp).
#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <cstring>

#include "opkit/error.hpp"
#include "opkit/ops/pow.hpp"
#include "ops/pow/mine_plan.hpp"
#include "ops/sha256/sha256_compress.hpp"
#include "unit/test_pow_reference.hpp"

namespace {

using opkit::Errc;
using opkit::Error;
using opkit::Sha256Digest;
using opkit::ops::BlockHeader;
using opkit::ops::Target;

// prefix + count x fill + suffix (built with append: GCC 12's -Wrestrict misfires on the
// operator+ of a literal and a temporary string at -O3).
std::string text(const char* prefix, std::size_t count, char fill, const char* suffix = "") {
  std::string s(prefix);
  s.append(count, fill);
  s.append(suffix);
  return s;
}

Errc kind_of(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no opkit::Error thrown";
  return Errc::runtime;
}

TEST(PowTarget, GenesisCompactBitsGiveTheDifficultyOneTarget) {
  EXPECT_EQ(Target::from_compact(0x1d00ffff).hex(), text("00000000ffff", 52, '0'));
}

TEST(PowTarget, CompactWithSmallExponentShiftsTheMantissaRight) {
  EXPECT_EQ(Target::from_compact(0x03123456).hex(), text("", 58, '0', "123456"));
  EXPECT_EQ(Target::from_compact(0x02123456).hex(), text("", 60, '0', "1234"));
  EXPECT_EQ(Target::from_compact(0x04123456).hex(), text("", 56, '0', "12345600"));
}

TEST(PowTarget, CompactLargestValidExponentFillsTheTopBytes) {
  EXPECT_EQ(Target::from_compact(0x2000ffff).hex(), text("00ffff", 58, '0'));
  EXPECT_EQ(Target::from_compact(0x22000001).hex(), text("01", 62, '0'));
}

TEST(PowTarget, NegativeOverflowingAndZeroCompactBitsAreErrors) {
  for (std::uint32_t bad :
       {0x1d80ffffu, 0x04923456u, 0x23000100u, 0x21010000u, 0xff123456u, 0x1d000000u, 0x01003456u}) {
    EXPECT_EQ(kind_of([&] { Target::from_compact(bad); }), Errc::invalid_argument) << std::hex << bad;
  }
  try {
    Target::from_compact(0x1d800001);
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("negative"), std::string::npos) << e.message();
  }
  try {
    Target::from_compact(0x1d000000);
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("impossible target"), std::string::npos) << e.message();
  }
}

TEST(PowTarget, HexRoundTripsAndRejectsBadInput) {
  const std::string hex = "00000000ffff0000000000000000000000000000000000000000000000000001";
  EXPECT_EQ(Target::from_hex(hex).hex(), hex);
  EXPECT_EQ(Target::from_hex(hex).top_word(), 0u);
  EXPECT_EQ(kind_of([] { Target::from_hex("00ff"); }), Errc::invalid_argument);
  EXPECT_EQ(kind_of([] { Target::from_hex(text("", 63, '0', "g")); }), Errc::invalid_argument);
  EXPECT_EQ(kind_of([] { Target::from_hex(std::string(64, '0')); }), Errc::invalid_argument);
}

TEST(PowTarget, LeadingZeroBitsMeansTwoToTheRestMinusOne) {
  EXPECT_EQ(Target::from_leading_zero_bits(1).hex(), text("7", 63, 'f'));
  EXPECT_EQ(Target::from_leading_zero_bits(12).hex(), text("000", 61, 'f'));
  EXPECT_EQ(Target::from_leading_zero_bits(255).hex(), text("", 63, '0', "1"));
  EXPECT_EQ(Target::from_leading_zero_bits(32).top_word(), 0u);
  EXPECT_EQ(Target::from_leading_zero_bits(4).top_word(), 0x0fffffffu);
  EXPECT_EQ(kind_of([] { Target::from_leading_zero_bits(0); }), Errc::invalid_argument);
  EXPECT_EQ(kind_of([] { Target::from_leading_zero_bits(256); }), Errc::invalid_argument);
}

TEST(PowTarget, BitcoinComparesTheDigestAsALittleEndianNumberInclusive) {
  Target t = Target::from_hex(text("00000000ffff", 52, '0'));
  Sha256Digest d{};
  d[27] = 0xff;  // little-endian number 0x00000000ff00...: below the target
  EXPECT_TRUE(opkit::ops::bitcoin_meets(d, t));
  d[27] = 0;
  d[26] = 0xff;
  d[27] = 0xff;
  EXPECT_TRUE(opkit::ops::bitcoin_meets(d, t));  // equal to the target
  d[25] = 1;
  EXPECT_FALSE(opkit::ops::bitcoin_meets(d, t));
  d = Sha256Digest{};
  d[28] = 1;
  EXPECT_FALSE(opkit::ops::bitcoin_meets(d, t));
}

TEST(PowTarget, DataComparesTheDigestAsABigEndianNumber) {
  Target t = Target::from_leading_zero_bits(12);
  Sha256Digest d{};
  d[1] = 0x0f;
  d[31] = 0xff;
  EXPECT_TRUE(opkit::ops::data_meets(d, t));
  d[1] = 0x10;
  EXPECT_FALSE(opkit::ops::data_meets(d, t));
}

TEST(PowHeader, RealHeadersDecodeAndHashToTheirBlockHash) {
  const auto headers = opkit::test::real_headers();
  ASSERT_GE(headers.size(), 2u);
  for (const auto& h : headers) {
    EXPECT_EQ(opkit::ops::bitcoin_hash_hex(opkit::ops::bitcoin_hash(h.header, h.nonce)), h.hash) << h.height;
    EXPECT_TRUE(
        opkit::ops::bitcoin_meets(opkit::ops::bitcoin_hash(h.header, h.nonce), Target::from_compact(h.header.nbits())));
    EXPECT_EQ(BlockHeader::from_hex(h.header.hex()).bytes, h.header.bytes);
  }
  EXPECT_EQ(headers[0].header.version(), 1u);
  EXPECT_EQ(headers[0].header.nbits(), 0x1d00ffffu);
  EXPECT_EQ(headers[0].header.time(), 1231006505u);
  EXPECT_EQ(headers[0].nonce, 2083236893u);
}

TEST(PowHeader, BadHexIsAnErrorNamingTheProblem) {
  try {
    BlockHeader::from_hex("0011");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Errc::invalid_argument);
    EXPECT_NE(e.message().find("160 hex digits"), std::string::npos) << e.message();
  }
  try {
    BlockHeader::from_hex(text("", 100, '0', "zz") + std::string(58, '0'));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("position 100"), std::string::npos) << e.message();
  }
}

TEST(PowHeader, DataHashIsSha256OfTheStringAndDecimalNonce) {
  unsigned char expected[32];
  const std::string message = "hello18446744073709551615";
  SHA256(reinterpret_cast<const unsigned char*>(message.data()), message.size(), expected);
  const Sha256Digest d = opkit::ops::data_hash("hello", 18446744073709551615ull);
  EXPECT_EQ(0, std::memcmp(d.data(), expected, 32));
}

TEST(PowPlan, DataMidstateCoversTheWholeBlocksAndLeavesThePrefix) {
  opkit::ops::DataJob job;
  job.data = std::string(150, 'x');
  job.difficulty_bits = 8;
  const auto plan = opkit::ops::detail::make_plan(job);
  EXPECT_EQ(plan.prefix, std::string(22, 'x'));
  auto state = opkit::ops::detail::sha256_iv;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(job.data.data());
  opkit::ops::detail::sha256_compress_portable(state.data(), bytes);
  opkit::ops::detail::sha256_compress_portable(state.data(), bytes + 64);
  EXPECT_EQ(plan.midstate, state);
  EXPECT_EQ(plan.first, 0u);
  EXPECT_EQ(plan.last, ~std::uint64_t{0});
}

TEST(PowPlan, RangesOutsideTheNonceSpaceAreErrors) {
  opkit::ops::BitcoinJob job;
  job.header = opkit::test::real_headers()[0].header;
  job.start = 0x100000000ull;
  EXPECT_EQ(kind_of([&] { opkit::ops::detail::make_plan(job); }), Errc::invalid_argument);
  job.start = 0xffffff00u;
  job.count = 0x100;
  EXPECT_EQ(opkit::ops::detail::make_plan(job).last, 0xffffffffu);
  job.count = 0x101;
  EXPECT_EQ(kind_of([&] { opkit::ops::detail::make_plan(job); }), Errc::invalid_argument);
  job.count = 0;
  EXPECT_EQ(kind_of([&] { opkit::ops::detail::make_plan(job); }), Errc::invalid_argument);
  opkit::ops::DataJob data;
  data.difficulty_bits = 4;
  data.start = ~std::uint64_t{0};
  data.count = 2;
  EXPECT_EQ(kind_of([&] { opkit::ops::detail::make_plan(data); }), Errc::invalid_argument);
  data.count = 1;
  EXPECT_EQ(opkit::ops::detail::make_plan(data).last, ~std::uint64_t{0});
}

}  // namespace
