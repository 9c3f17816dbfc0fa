// Proof-of-work mining on every target with every engine it has (on a device: the generic and the
// specialised kernel and the library's adaptive choice; on host: the native CPU miner): real
// Bitcoin headers give their real nonce and hash, random jobs of both schemes give the lowest
// nonce of the brute-force reference (OpenSSL), and the range, stop and progress contracts hold.
#include <gtest/gtest.h>

#include <atomic>
#include <random>

#include "conformance/devices.hpp"
#include "conformance/mine_on.hpp"
#include "opkit/ops/pow.hpp"
#include "unit/test_pow_reference.hpp"

namespace {

using namespace opkit::ops;
using opkit::test::brute_force_bitcoin;
using opkit::test::brute_force_data;
using opkit::test::engine_name;
using opkit::test::engines_of;
using opkit::test::mine_on;
using opkit::test::MineEngine;

OPKIT_CONFORMANCE_OPERATOR_SUITE(Mine, opkit::ops::mine_support());

MineOptions launches_of(double seconds) {
  MineOptions options;
  options.launch_seconds = seconds;
  return options;
}

TEST_P(Mine, RealHeadersGiveTheRealNonceAndHashIn2To20Nonces) {
  for (const auto& h : opkit::test::real_headers()) {
    BitcoinJob job;
    job.header = h.header;
    job.start = h.nonce >= (1u << 19) ? h.nonce - (1u << 19) : 0;
    job.count = 1u << 20;
    for (MineEngine engine : engines_of(target())) {
      SCOPED_TRACE(std::string(engine_name(engine)) + ", block " + std::to_string(h.height));
      const MineResult r = mine_on(target(), engine, job);
      ASSERT_TRUE(r.found);
      EXPECT_EQ(r.nonce, h.nonce);
      EXPECT_EQ(r.hash_hex, h.hash);
      EXPECT_EQ(r.searched_through, std::optional<std::uint64_t>(h.nonce));
      EXPECT_FALSE(r.interrupted);
      EXPECT_GT(r.hashes, 0u);
    }
  }
}

TEST_P(Mine, RandomBitcoinJobsGiveTheBruteForceLowestNonce) {
  std::mt19937_64 rng(std::random_device{}());
  for (int trial = 0; trial < 6; ++trial) {
    BitcoinJob job;
    for (auto& b : job.header.bytes) b = static_cast<std::uint8_t>(rng());
    job.target = Target::from_leading_zero_bits(8 + trial % 4);
    job.start = rng() % 0xfff00000u;
    job.count = 20000;
    const auto expected = brute_force_bitcoin(job.header, *job.target, job.start, job.start + *job.count - 1);
    for (MineEngine engine : engines_of(target())) {
      SCOPED_TRACE(std::string(engine_name(engine)) + ", trial " + std::to_string(trial));
      const MineResult r = mine_on(target(), engine, job, launches_of(trial % 2 ? 1e-4 : 0.1));  // many chunks, or few
      ASSERT_EQ(r.found, expected.has_value());
      if (expected) {
        EXPECT_EQ(r.nonce, *expected);
        EXPECT_TRUE(bitcoin_meets(r.digest, *job.target));
      } else {
        EXPECT_EQ(r.searched_through, job.start + *job.count - 1);
      }
    }
  }
}

TEST_P(Mine, ManySmallLaunchesGiveTheBruteForceLowestNonce) {
  std::mt19937_64 rng(std::random_device{}());
  for (int trial = 0; trial < 2; ++trial) {
    BitcoinJob job;
    for (auto& b : job.header.bytes) b = static_cast<std::uint8_t>(rng());
    job.target = Target::from_leading_zero_bits(18);
    job.start = rng() % 0x80000000u;
    job.count = 1u << 22;
    const auto expected = brute_force_bitcoin(job.header, *job.target, job.start, job.start + *job.count - 1);
    for (MineEngine engine : engines_of(target())) {
      SCOPED_TRACE(std::string(engine_name(engine)) + ", trial " + std::to_string(trial));
      const MineResult r = mine_on(target(), engine, job, launches_of(0.002));
      ASSERT_EQ(r.found, expected.has_value());
      if (expected) {
        EXPECT_EQ(r.nonce, *expected);
      }
    }
  }
}

TEST_P(Mine, RandomDataJobsGiveTheBruteForceLowestNonceAcrossDigitCountsAndTailBlocks) {
  std::mt19937_64 rng(std::random_device{}());
  for (int trial = 0; trial < 6; ++trial) {
    const DataJob job = opkit::test::random_data_job(rng);
    const auto expected = brute_force_data(job.data, job.difficulty_bits, job.start, job.start + *job.count - 1);
    for (MineEngine engine : engines_of(target())) {
      SCOPED_TRACE(std::string(engine_name(engine)) + ", trial " + std::to_string(trial) + ", length " +
                   std::to_string(job.data.size()));
      const MineResult r = mine_on(target(), engine, job, launches_of(trial % 2 ? 1e-4 : 0.1));
      ASSERT_EQ(r.found, expected.has_value());
      if (expected) {
        EXPECT_EQ(r.nonce, *expected);
        EXPECT_EQ(r.digest, data_hash(job.data, r.nonce));
        EXPECT_EQ(r.hash_hex, data_hash_hex(r.digest));
      }
    }
  }
}

// Found near the end, and not found up to the last nonce: the range ends at 2^64 - 1 without
// wrapping around.
TEST_P(Mine, DataRangesRunToTheLast64BitNonce) {
  for (auto [bits, count] : {std::pair{16, std::uint64_t{1} << 20}, std::pair{20, std::uint64_t{2000}}}) {
    DataJob job{"edge of the nonce space", bits, ~std::uint64_t{0} - (count - 1), std::nullopt};
    const auto expected = brute_force_data(job.data, bits, job.start, ~std::uint64_t{0});
    for (MineEngine engine : engines_of(target())) {
      SCOPED_TRACE(std::string(engine_name(engine)) + ", " + std::to_string(bits) + " bits");
      const MineResult r = mine_on(target(), engine, job);
      ASSERT_EQ(r.found, expected.has_value());
      if (expected) {
        EXPECT_EQ(r.nonce, *expected);
      }
      EXPECT_EQ(r.searched_through, expected ? *expected : ~std::uint64_t{0});
      EXPECT_FALSE(r.interrupted);
    }
  }
}

// A target whose top word equals the top word of the first nonce's hash, with zeros below: that
// nonce passes a kernel's quick test but not the host's full compare.
TEST_P(Mine, CandidateThatOnlyMatchesTheTopWordIsSkipped) {
  BitcoinJob job;
  job.header = opkit::test::real_headers()[0].header;
  job.start = 777;
  job.count = 5000;
  const opkit::Sha256Digest first = bitcoin_hash(job.header, 777);
  Target t;
  for (std::size_t i = 0; i < 4; ++i) t.bytes[i] = first[31 - i];
  job.target = t;
  const auto expected = brute_force_bitcoin(job.header, t, 777, 777 + 4999);
  ASSERT_NE(expected, std::optional<std::uint64_t>(777));
  for (MineEngine engine : engines_of(target())) {
    SCOPED_TRACE(engine_name(engine));
    const MineResult r = mine_on(target(), engine, job);
    ASSERT_EQ(r.found, expected.has_value());
    if (expected) {
      EXPECT_EQ(r.nonce, *expected);
    }
  }
}

TEST_P(Mine, NotFoundReportsTheWholeRangeSearched) {
  BitcoinJob job;
  job.header = opkit::test::real_headers()[0].header;  // its real target: no nonce of this range
  job.start = 1000;
  job.count = 20000;
  for (MineEngine engine : engines_of(target())) {
    SCOPED_TRACE(engine_name(engine));
    const MineResult r = mine_on(target(), engine, job);
    EXPECT_FALSE(r.found);
    EXPECT_FALSE(r.interrupted);
    EXPECT_EQ(r.searched_through, std::optional<std::uint64_t>(20999));
    EXPECT_EQ(r.hashes, 20000u);
  }
}

TEST_P(Mine, StopBeforeStartSearchesNothing) {
  std::atomic<bool> stop{true};
  MineOptions options;
  options.stop = &stop;
  DataJob job{"x", 40, 5, std::nullopt};
  for (MineEngine engine : engines_of(target())) {
    SCOPED_TRACE(engine_name(engine));
    const MineResult r = mine_on(target(), engine, job, options);
    EXPECT_FALSE(r.found);
    EXPECT_TRUE(r.interrupted);
    EXPECT_FALSE(r.searched_through.has_value());
  }
}

TEST_P(Mine, StopFromTheProgressCallbackEndsWithAResumablePrefix) {
  for (MineEngine engine : engines_of(target())) {
    SCOPED_TRACE(engine_name(engine));
    std::atomic<bool> stop{false};
    int calls = 0;
    MineOptions options = launches_of(0.02);
    options.stop = &stop;
    options.progress_seconds = 0.05;
    options.progress = [&](const MineProgress& p) {
      ++calls;
      EXPECT_EQ(p.total, ~std::uint64_t{0} - 99);
      if (p.hashes > 0) stop = true;
    };
    DataJob job{"never", 200, 100, std::nullopt};
    const MineResult r = mine_on(target(), engine, job, options);
    EXPECT_GE(calls, 1);
    EXPECT_TRUE(r.interrupted);
    EXPECT_FALSE(r.found);
    ASSERT_TRUE(r.searched_through.has_value());
    EXPECT_GE(*r.searched_through, 100u);
    EXPECT_GE(r.hashes, *r.searched_through - 99);
  }
}

TEST_P(Mine, DeviceAndNativeCpuTogetherGiveTheBruteForceLowestNonce) {
  OPKIT_DEVICE_OR_SKIP(device, "second engine (host is the native CPU miner already)");
  DataJob job{"together", 18, 0, std::nullopt};
  const auto expected = brute_force_data(job.data, 18, 0, ~std::uint64_t{0});
  MineOptions both;
  both.devices = {device};
  both.cpu = true;
  const MineResult r = mine(job, both);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.nonce, *expected);
  EXPECT_EQ(r.engines.size(), 2u);
  EXPECT_TRUE(data_meets(r.digest, Target::from_leading_zero_bits(18)));
}

}  // namespace
