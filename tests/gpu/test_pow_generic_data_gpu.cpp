// The generic data-mode kernel on the GPU (what mines while a job's own kernel compiles): random
// jobs across digit counts and tail blocks, and the last 64-bit nonces, against the brute-force
// reference and the CPU miner; the public API's adaptive choice gives the same answer.
#include <gtest/gtest.h>

#include <random>

#include "gpu/gpu_test.hpp"
#include "gpu/pow_on_gpu.hpp"
#include "opkit/ops/pow.hpp"
#include "unit/test_pow_reference.hpp"

namespace {

using namespace opkit::ops;
namespace detail = opkit::ops::detail;

MineResult on_gpu_generic(const opkit::Device& gpu, const DataJob& job) {
  return opkit::test::on_gpu(gpu, job, detail::PowKernelChoice::generic);
}

TEST(PowGpuGenericData, RandomJobsMatchBruteForceAcrossDigitCountsAndTailBlocks) {
  OPKIT_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(909);
  for (int trial = 0; trial < 8; ++trial) {
    const DataJob job = opkit::test::random_data_job(rng);
    const auto expected =
        opkit::test::brute_force_data(job.data, job.difficulty_bits, job.start, job.start + *job.count - 1);
    const MineResult r = on_gpu_generic(gpu, job);
    ASSERT_EQ(r.found, expected.has_value()) << trial;
    if (expected) {
      EXPECT_EQ(r.nonce, *expected) << "trial " << trial << " length " << job.data.size();
    }
    MineOptions options;
    options.devices = {gpu};
    const MineResult adaptive = mine(job, options);
    EXPECT_EQ(adaptive.found, r.found) << trial;
    EXPECT_EQ(adaptive.nonce, r.nonce) << trial;
  }
}

TEST(PowGpuGenericData, RangeToTheLast64BitNonceMatchesTheCpu) {
  OPKIT_SKIP_WITHOUT_GPU();
  DataJob job{"edge of the nonce space", 18, ~std::uint64_t{0} - 3'000'000, std::nullopt};
  MineOptions cpu_options;
  cpu_options.cpu = true;
  const MineResult cpu = mine(job, cpu_options);
  const MineResult r = on_gpu_generic(gpu, job);
  EXPECT_EQ(r.found, cpu.found);
  EXPECT_EQ(r.nonce, cpu.nonce);
  EXPECT_EQ(r.searched_through, cpu.searched_through);
}

}  // namespace
