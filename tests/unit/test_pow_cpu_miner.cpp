// The native CPU miner through opkit::ops::mine: real headers give their real nonce and hash,
// random low-difficulty jobs of both schemes give the brute-force (OpenSSL) lowest nonce, and
// the range, stop and progress contracts hold.
#include <gtest/gtest.h>

#include <atomic>
#include <random>

#include "opkit/error.hpp"
#include "opkit/ops/pow.hpp"
#include "unit/test_pow_reference.hpp"

namespace {

using namespace opkit::ops;
using opkit::test::brute_force_bitcoin;
using opkit::test::brute_force_data;

MineOptions cpu_only(double launch_seconds = 0.1) {
  MineOptions o;
  o.cpu = true;
  o.launch_seconds = launch_seconds;
  return o;
}

TEST(PowCpuMiner, RealHeadersGiveTheRealNonceAndHashIn2To20Nonces) {
  for (const auto& h : opkit::test::real_headers()) {
    BitcoinJob job;
    job.header = h.header;
    job.start = h.nonce >= (1u << 19) ? h.nonce - (1u << 19) : 0;
    job.count = 1u << 20;
    const MineResult r = mine(job, cpu_only());
    ASSERT_TRUE(r.found) << h.height;
    EXPECT_EQ(r.nonce, h.nonce);
    EXPECT_EQ(r.hash_hex, h.hash);
    EXPECT_EQ(r.searched_through, std::optional<std::uint64_t>(h.nonce));
    EXPECT_FALSE(r.interrupted);
    EXPECT_GT(r.hashes, 0u);
  }
}

TEST(PowCpuMiner, RandomBitcoinJobsGiveTheBruteForceLowestNonce) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 12; ++trial) {
    BlockHeader header;
    for (auto& b : header.bytes) b = static_cast<std::uint8_t>(rng());
    BitcoinJob job;
    job.header = header;
    job.target = Target::from_leading_zero_bits(8 + trial % 4);
    job.start = rng() % 0xfff00000u;
    job.count = 5000;
    const auto expected = brute_force_bitcoin(header, *job.target, job.start, job.start + *job.count - 1);
    const MineResult r = mine(job, cpu_only(trial % 2 ? 1e-4 : 0.1));  // many small chunks, or few
    ASSERT_EQ(r.found, expected.has_value()) << trial;
    if (expected) {
      EXPECT_EQ(r.nonce, *expected) << trial;
      EXPECT_TRUE(bitcoin_meets(r.digest, *job.target));
    } else {
      EXPECT_EQ(r.searched_through, job.start + *job.count - 1);
    }
  }
}

TEST(PowCpuMiner, RandomDataJobsGiveTheBruteForceLowestNonceAcrossDigitCountsAndBlocks) {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 24; ++trial) {
    const DataJob job = opkit::test::random_data_job(rng, {.min_bits = 6, .below = 200, .count = 3000});
    const auto expected = brute_force_data(job.data, job.difficulty_bits, job.start, job.start + *job.count - 1);
    const MineResult r = mine(job, cpu_only(trial % 2 ? 1e-4 : 0.1));
    ASSERT_EQ(r.found, expected.has_value()) << trial;
    if (expected) {
      EXPECT_EQ(r.nonce, *expected) << "trial " << trial << " length " << job.data.size();
      EXPECT_EQ(r.digest, data_hash(job.data, r.nonce));
    }
  }
}

TEST(PowCpuMiner, DataRangeRunsToTheLast64BitNonce) {
  DataJob job;
  job.data = "edge";
  job.difficulty_bits = 20;  // ~1M expected: not found in the last 2000 nonces
  job.start = ~std::uint64_t{0} - 1999;
  const MineResult r = mine(job, cpu_only());
  const auto expected = brute_force_data(job.data, job.difficulty_bits, job.start, ~std::uint64_t{0});
  EXPECT_EQ(r.found, expected.has_value());
  if (!expected) {
    EXPECT_EQ(r.searched_through, ~std::uint64_t{0});
  }
  EXPECT_FALSE(r.interrupted);
}

TEST(PowCpuMiner, NotFoundReportsTheWholeRangeSearched) {
  BitcoinJob job;
  job.header = opkit::test::real_headers()[0].header;
  job.start = 1000;
  job.count = 20000;
  const MineResult r = mine(job, cpu_only());
  EXPECT_FALSE(r.found);
  EXPECT_FALSE(r.interrupted);
  EXPECT_EQ(r.searched_through, std::optional<std::uint64_t>(20999));
  EXPECT_EQ(r.hashes, 20000u);
}

TEST(PowCpuMiner, StopBeforeStartSearchesNothing) {
  std::atomic<bool> stop{true};
  MineOptions o = cpu_only();
  o.stop = &stop;
  DataJob job{"x", 40, 5, std::nullopt};
  const MineResult r = mine(job, o);
  EXPECT_FALSE(r.found);
  EXPECT_TRUE(r.interrupted);
  EXPECT_FALSE(r.searched_through.has_value());
}

TEST(PowCpuMiner, StopFromTheProgressCallbackEndsWithAResumablePrefix) {
  std::atomic<bool> stop{false};
  int calls = 0;
  MineOptions o = cpu_only(0.02);
  o.stop = &stop;
  o.progress_seconds = 0.05;
  o.progress = [&](const MineProgress& p) {
    ++calls;
    EXPECT_EQ(p.total, ~std::uint64_t{0} - 99);
    if (p.hashes > 0) stop = true;
  };
  DataJob job{"never", 200, 100, std::nullopt};
  const MineResult r = mine(job, o);
  EXPECT_GE(calls, 1);
  EXPECT_TRUE(r.interrupted);
  EXPECT_FALSE(r.found);
  ASSERT_TRUE(r.searched_through.has_value());
  EXPECT_GE(*r.searched_through, 100u);
  EXPECT_GE(r.hashes, *r.searched_through - 99);
}

TEST(PowCpuMiner, BadJobsAreInvalidArgumentErrors) {
  DataJob job{"x", 0, 0, std::nullopt};
  EXPECT_THROW(mine(job, cpu_only()), opkit::Error);
  MineOptions o = cpu_only();
  o.launch_seconds = 0;
  job.difficulty_bits = 4;
  try {
    mine(job, o);
    FAIL();
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument);
  }
}

}  // namespace
