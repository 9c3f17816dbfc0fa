// The generic data-mode kernel on the GPU (what mines while a job's own kernel compiles): random
// jobs across digit counts and tail blocks, and the last 64-bit nonces, against the brute-force
// reference and the CPU miner; the public API's adaptive choice gives the same answer.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "gpu/gpu_test.hpp"
#include "opkit/ops/pow.hpp"
#include "ops/pow/kernel_miner.hpp"
#include "ops/pow/mine_plan.hpp"
#include "ops/pow/range_search.hpp"
#include "unit/test_pow_reference.hpp"

namespace {

using namespace opkit::ops;
namespace detail = opkit::ops::detail;

MineResult on_gpu_generic(const opkit::Device& gpu, const DataJob& job) {
  const detail::MinePlan plan = detail::make_plan(job);
  detail::PowKernelTuning tuning;
  tuning.kernel = detail::PowKernelChoice::generic;
  std::vector<std::unique_ptr<detail::NonceSearcher>> engines;
  engines.push_back(detail::make_kernel_searcher(plan, gpu, 0.1, tuning));
  MineOptions options;
  options.launch_seconds = 0.1;
  return detail::search_range(plan, std::move(engines), options);
}

TEST(PowGpuGenericData, RandomJobsMatchBruteForceAcrossDigitCountsAndTailBlocks) {
  OPKIT_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(909);
  for (int trial = 0; trial < 8; ++trial) {
    DataJob job;
    const std::size_t len = rng() % 150;
    for (std::size_t i = 0; i < len; ++i) job.data.push_back(static_cast<char>(rng()));
    job.difficulty_bits = 8 + static_cast<int>(rng() % 5);
    const int k = 1 + static_cast<int>(rng() % 19);
    std::uint64_t p = 1;
    for (int i = 0; i < k; ++i) p *= 10;
    job.start = p > 3000 ? p - rng() % 3000 : 0;
    job.count = 20000;
    const auto expected =
        opkit::test::brute_force_data(job.data, job.difficulty_bits, job.start, job.start + *job.count - 1);
    const MineResult r = on_gpu_generic(gpu, job);
    ASSERT_EQ(r.found, expected.has_value()) << trial;
    if (expected) {
      EXPECT_EQ(r.nonce, *expected) << "trial " << trial << " length " << len;
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
