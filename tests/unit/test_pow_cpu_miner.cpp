// Bad mining jobs are invalid-argument errors before any engine starts. The miners themselves
// (native CPU miner, kernels on every device): tests/conformance/test_mine.cpp.
#include <gtest/gtest.h>

#include "opkit/error.hpp"
#include "opkit/ops/pow.hpp"

namespace {

using namespace opkit::ops;

MineOptions cpu_only() {
  MineOptions o;
  o.cpu = true;
  return o;
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
