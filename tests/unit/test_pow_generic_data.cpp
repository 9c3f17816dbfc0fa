// The generic data-mode kernel (one program for every job, the job as its argument) on the CPU
// backend: the same lowest nonce as the brute-force reference for one and two tail blocks and
// across a digit-count change; it also compiles under NVRTC.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <vector>

#include "nvrtc_required.hpp"
#include "opkit/error.hpp"
#include "opkit/nvrtc.hpp"
#include "opkit/ops/pow.hpp"
#include "opkit/target.hpp"
#include "ops/pow/kernel_miner.hpp"
#include "ops/pow/kernel_programs.hpp"
#include "ops/pow/mine_plan.hpp"
#include "ops/pow/range_search.hpp"
#include "unit/test_pow_reference.hpp"

namespace {

using namespace opkit::ops;
namespace detail = opkit::ops::detail;

TEST(PowGenericData, CompilesUnderNvrtc) {
  OPKIT_REQUIRE_NVRTC();
  const auto compiled = opkit::compile(detail::data_generic_program({}), opkit::Target::cuda("sm_90"));
  EXPECT_FALSE(compiled.binary.empty());
}

TEST(PowGenericData, MatchesBruteForceOnTheCpuBackend) {
  std::optional<opkit::Device> cpu;
  try {
    cpu = opkit::Device::cpu();
  } catch (const opkit::Error& e) {
    GTEST_SKIP() << "no CPU backend: " << e.message();
  }
  detail::PowKernelTuning tuning;
  tuning.kernel = detail::PowKernelChoice::generic;
  // Lengths: one tail block; digits crossing into a second block; a whole block in the midstate.
  for (std::size_t length : {3u, 58u, 70u, 127u}) {
    DataJob job{std::string(length, 'g'), 8, 999'999'900, 3000};
    const auto expected = opkit::test::brute_force_data(job.data, 8, job.start, job.start + 2999);
    const detail::MinePlan plan = detail::make_plan(job);
    std::vector<std::unique_ptr<detail::NonceSearcher>> engines;
    engines.push_back(detail::make_kernel_searcher(plan, *cpu, 0.1, tuning));
    MineOptions options;
    options.launch_seconds = 0.1;
    const MineResult r = detail::search_range(plan, std::move(engines), options);
    ASSERT_EQ(r.found, expected.has_value()) << length;
    if (expected) {
      EXPECT_EQ(r.nonce, *expected) << length;
      EXPECT_EQ(r.hash_hex, data_hash_hex(data_hash(job.data, *expected))) << length;
    }
  }
}

}  // namespace
