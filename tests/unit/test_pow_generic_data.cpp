// The generic data-mode kernel (one program for every job, the job as its argument) compiles
// under NVRTC. Its results on every device: tests/conformance/test_mine.cpp.
#include <gtest/gtest.h>

#include "nvrtc_required.hpp"
#include "opkit/nvrtc.hpp"
#include "opkit/ops/pow.hpp"
#include "opkit/target.hpp"
#include "ops/pow/kernel_programs.hpp"

namespace {

using namespace opkit::ops;
namespace detail = opkit::ops::detail;

TEST(PowGenericData, CompilesUnderNvrtc) {
  OPKIT_REQUIRE_NVRTC();
  const auto compiled = opkit::compile(detail::data_generic_program({}), opkit::Target::cuda("sm_90"));
  EXPECT_FALSE(compiled.binary.empty());
}

}  // namespace
