// The mining kernel sources compile under NVRTC for every job shape (no GPU needed). Their
// results on every device: tests/conformance/test_mine.cpp.
#include <gtest/gtest.h>

#include "nvrtc_required.hpp"
#include "opkit/nvrtc.hpp"
#include "opkit/ops/pow.hpp"
#include "opkit/target.hpp"
#include "ops/pow/kernel_programs.hpp"
#include "ops/pow/mine_plan.hpp"
#include "unit/test_pow_reference.hpp"

namespace {

using namespace opkit::ops;
namespace detail = opkit::ops::detail;

TEST(PowKernels, BitcoinKernelCompilesUnderNvrtcSpecialisedAndGeneric) {
  OPKIT_REQUIRE_NVRTC();
  BitcoinJob job;
  job.header = opkit::test::real_headers()[0].header;
  const auto plan = detail::make_plan(job);
  for (bool specialised : {true, false}) {
    const auto compiled = opkit::compile(detail::bitcoin_program(plan, specialised, {}), opkit::Target::cuda("sm_90"));
    EXPECT_EQ(compiled.format, opkit::BinaryFormat::cubin);
    EXPECT_FALSE(compiled.binary.empty());
  }
}

TEST(PowKernels, DataKernelCompilesUnderNvrtcForOneAndTwoTailBlocks) {
  OPKIT_REQUIRE_NVRTC();
  // (string length, digits): digits split across two tail blocks; a whole block absorbed into
  // the midstate and 20 digits in one tail block. (Each NVRTC compile takes seconds.)
  for (auto [length, digits] : {std::pair{60, 10}, std::pair{100, 20}}) {
    DataJob job{std::string(static_cast<std::size_t>(length), 'a'), 16, 0, std::nullopt};
    const auto compiled =
        opkit::compile(detail::data_program(detail::make_plan(job), digits, {}), opkit::Target::cuda("sm_90"));
    EXPECT_FALSE(compiled.binary.empty()) << length << " " << digits;
  }
}

}  // namespace
