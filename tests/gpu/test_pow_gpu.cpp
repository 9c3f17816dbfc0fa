// Proof-of-work on the GPU: real headers give their real nonce and hash with the generic and the
// specialised kernel; random jobs of both schemes give the same lowest nonce as the brute-force
// reference and the CPU miner; GPU + CPU together give the same answer as either alone.
#include <gtest/gtest.h>

#include <random>

#include "gpu/gpu_test.hpp"
#include "gpu/pow_on_gpu.hpp"
#include "opkit/ops/pow.hpp"
#include "unit/test_pow_reference.hpp"

namespace {

using namespace opkit::ops;
namespace detail = opkit::ops::detail;

using opkit::test::on_gpu;

template <class Job>
MineResult on_cpu(const Job& job) {
  MineOptions o;
  o.cpu = true;
  return mine(job, o);
}

TEST(PowGpu, RealHeadersGiveTheRealNonceAndHashWithBothKernels) {
  OPKIT_SKIP_WITHOUT_GPU();
  for (const auto& h : opkit::test::real_headers()) {
    BitcoinJob job;
    job.header = h.header;
    job.start = h.nonce - (1u << 19);
    job.count = 1u << 20;
    for (auto choice : {detail::PowKernelChoice::generic, detail::PowKernelChoice::specialised}) {
      const MineResult r = on_gpu(gpu, job, choice);
      ASSERT_TRUE(r.found) << h.height;
      EXPECT_EQ(r.nonce, h.nonce);
      EXPECT_EQ(r.hash_hex, h.hash);
    }
    const MineResult r = mine(job);  // the public API: every GPU, adaptive kernel choice
    EXPECT_EQ(r.nonce, h.nonce);
  }
}

TEST(PowGpu, RandomBitcoinJobsMatchBruteForce) {
  OPKIT_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 4; ++trial) {
    BitcoinJob job;
    for (auto& b : job.header.bytes) b = static_cast<std::uint8_t>(rng());
    job.target = Target::from_leading_zero_bits(10 + trial % 3);
    job.start = rng() % 0xfff00000u;
    job.count = 20000;
    const auto expected =
        opkit::test::brute_force_bitcoin(job.header, *job.target, job.start, job.start + *job.count - 1);
    for (auto choice : {detail::PowKernelChoice::generic, detail::PowKernelChoice::specialised}) {
      const MineResult r = on_gpu(gpu, job, choice);
      ASSERT_EQ(r.found, expected.has_value()) << trial;
      if (expected) {
        EXPECT_EQ(r.nonce, *expected) << trial;
      }
    }
  }
}

TEST(PowGpu, ManyLaunchesGiveTheCpuMinersLowestNonce) {
  OPKIT_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(32);
  for (int trial = 0; trial < 3; ++trial) {
    BitcoinJob job;
    for (auto& b : job.header.bytes) b = static_cast<std::uint8_t>(rng());
    job.target = Target::from_leading_zero_bits(24);
    job.start = rng() % 0x80000000u;
    job.count = 1u << 28;
    const MineResult cpu = on_cpu(job);
    const MineResult r = on_gpu(gpu, job, detail::PowKernelChoice::specialised, 0.002);  // many small launches
    ASSERT_EQ(r.found, cpu.found) << trial;
    EXPECT_EQ(r.nonce, cpu.nonce) << trial;
  }
}

TEST(PowGpu, RandomDataJobsMatchBruteForceAcrossDigitCountsAndTailBlocks) {
  OPKIT_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(33);
  for (int trial = 0; trial < 8; ++trial) {
    const DataJob job = opkit::test::random_data_job(rng);
    const auto expected =
        opkit::test::brute_force_data(job.data, job.difficulty_bits, job.start, job.start + *job.count - 1);
    const MineResult r = on_gpu(gpu, job, detail::PowKernelChoice::specialised);
    ASSERT_EQ(r.found, expected.has_value()) << trial;
    if (expected) {
      EXPECT_EQ(r.nonce, *expected) << "trial " << trial << " length " << job.data.size();
    }
  }
}

TEST(PowGpu, DataRangeToTheLast64BitNonceMatchesTheCpu) {
  OPKIT_SKIP_WITHOUT_GPU();
  DataJob job{"edge of the nonce space", 18, ~std::uint64_t{0} - 3'000'000, std::nullopt};
  const MineResult cpu = on_cpu(job);
  const MineResult r = on_gpu(gpu, job, detail::PowKernelChoice::specialised);
  EXPECT_EQ(r.found, cpu.found);
  EXPECT_EQ(r.nonce, cpu.nonce);
  EXPECT_EQ(r.searched_through, cpu.searched_through);
}

TEST(PowGpu, CandidateThatOnlyMatchesTheTopWordIsSkipped) {
  OPKIT_SKIP_WITHOUT_GPU();
  BitcoinJob job;
  job.header = opkit::test::real_headers()[0].header;
  job.start = 777;
  job.count = 5000;
  const opkit::Sha256Digest first = bitcoin_hash(job.header, 777);
  Target t;
  for (std::size_t i = 0; i < 4; ++i) t.bytes[i] = first[31 - i];
  job.target = t;
  const auto expected = opkit::test::brute_force_bitcoin(job.header, t, 777, 777 + 4999);
  for (auto choice : {detail::PowKernelChoice::generic, detail::PowKernelChoice::specialised}) {
    const MineResult r = on_gpu(gpu, job, choice);
    ASSERT_EQ(r.found, expected.has_value());
    if (expected) {
      EXPECT_EQ(r.nonce, *expected);
    }
  }
}

TEST(PowGpu, GpuAndCpuTogetherGiveTheSameLowestNonce) {
  OPKIT_SKIP_WITHOUT_GPU();
  DataJob job{"together", 26, 0, std::nullopt};
  MineOptions both;
  both.devices = {gpu};
  both.cpu = true;
  const MineResult r = mine(job, both);
  const MineResult alone = on_gpu(gpu, job, detail::PowKernelChoice::specialised);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.nonce, alone.nonce);
  EXPECT_EQ(r.engines.size(), 2u);
  EXPECT_TRUE(data_meets(r.digest, Target::from_leading_zero_bits(26)));
}

TEST(PowGpu, StopFlagEndsALongSearchWithinALaunch) {
  OPKIT_SKIP_WITHOUT_GPU();
  std::atomic<bool> stop{false};
  MineOptions o;
  o.devices = {gpu};
  o.stop = &stop;
  o.progress_seconds = 0.05;
  o.progress = [&](const MineProgress& p) {
    if (p.seconds > 0.5) stop = true;
  };
  DataJob job{"never", 120, 0, std::nullopt};
  const MineResult r = mine(job, o);
  EXPECT_TRUE(r.interrupted);
  EXPECT_LT(r.seconds, 1.5);
  ASSERT_TRUE(r.searched_through.has_value());
  EXPECT_GT(*r.searched_through, 1000000u);
}

}  // namespace
