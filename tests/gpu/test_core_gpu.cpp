// What only a real GPU does: a kernel fault poisons the context and becomes an error naming the
// kernel, and device memory runs out. Skips without a GPU. (Memory, copies, typed launches,
// streams and events on every device: tests/conformance/test_core.cpp.)
#include <gtest/gtest.h>

#include "gpu_test.hpp"
#include "opkit/opkit.hpp"

namespace {

TEST(CoreGpu, IllegalAddressInsideAKernelBecomesAnErrorNamingTheKernel) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto kernel = gpu.compile(opkit::Program(R"(
    __global__ void scribble(int* p) { p[threadIdx.x] = 1; })"))
                    .kernel("scribble");
  kernel.launch({.grid = 1, .block = 32}, reinterpret_cast<int*>(0x10));
  try {
    gpu.synchronize();
    FAIL() << "the fault was not reported";
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::launch);
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_ILLEGAL_ADDRESS");
    EXPECT_NE(e.kernel().find("scribble"), std::string::npos) << e.what();
  }
}

TEST(CoreGpu, OutOfMemoryIsAClearError) {
  OPKIT_SKIP_WITHOUT_GPU();
  try {
    auto huge = gpu.alloc<std::uint8_t>(std::size_t{1} << 50);
    FAIL();
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::memory);
    EXPECT_NE(e.message().find("out of device memory"), std::string::npos);
  }
}

}  // namespace
