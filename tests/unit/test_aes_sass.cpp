// The constant-time check of the AES kernels' machine code: the embedded AES source compiles
// under NVRTC for sm_90, and tools/aes_sass_check.py finds no shared or local memory access, no
// register-indexed constant load, and no load in the AES rounds whose address could depend on the
// state (docs/ciphers-aes.md explains the rules). The SASS part needs cuobjdump ($CUOBJDUMP or
// PATH) and python3, and skips without them.
#include <gtest/gtest.h>

#include "nvrtc_required.hpp"
#include "opkit/target.hpp"
#include "ops/cipher/aes_kernels.hpp"
#include "unit/sass_check.hpp"

namespace {

TEST(AesSass, KernelsCompileForSm90AndTheirSassHasNoDataDependentLoads) {
  OPKIT_REQUIRE_NVRTC();
  const opkit::CompiledProgram compiled = opkit::compile(opkit::ops::aes::aes_program(), opkit::Target::cuda("sm_90"));
  ASSERT_EQ(compiled.format, opkit::BinaryFormat::cubin);
  ASSERT_FALSE(compiled.binary.empty());
  if (const std::string missing = opkit::test::sass_tools_missing(); !missing.empty()) GTEST_SKIP() << missing;

  const opkit::test::SassCheck check = opkit::test::run_sass_check("aes_sass_check.py", compiled);
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_NE(check.output.find("aes_ctr_masked: round loop"), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("aes_sass_check: ok"), std::string::npos) << check.output;
}

// Asynchronous copies to shared memory (cp.async: LDGSTS) are memory accesses to the checker:
// one into a slot chosen by loaded data is caught, one into the thread's own slot passes.
TEST(AesSass, TheCheckerCatchesAnAsyncCopyToADataDependentSlot) {
  OPKIT_REQUIRE_NVRTC();
  if (const std::string missing = opkit::test::sass_tools_missing(); !missing.empty()) GTEST_SKIP() << missing;
  const opkit::Program copies(R"(
    __device__ void copy_async(uint4* to, const uint4* from) {
      const unsigned int shared_to = static_cast<unsigned int>(__cvta_generic_to_shared(to));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared_to), "l"(from) : "memory");
      asm volatile("cp.async.wait_all;" ::: "memory");
    }
    extern "C" __global__ void leaky_copy(const unsigned char* in, const uint4* src, uint4* out) {
      __shared__ uint4 slots[256];
      copy_async(slots + in[threadIdx.x], src + threadIdx.x);
      __syncthreads();
      out[threadIdx.x] = slots[threadIdx.x];
    }
    extern "C" __global__ void plain_copy(const uint4* src, uint4* out) {
      __shared__ uint4 slots[256];
      copy_async(slots + threadIdx.x, src + threadIdx.x);
      __syncthreads();
      out[threadIdx.x] = slots[255 - threadIdx.x];
    })");
  const opkit::CompiledProgram compiled = opkit::compile(copies, opkit::Target::cuda("sm_90"));
  const opkit::test::SassCheck check = opkit::test::run_sass_check("ct_sass_check.py", compiled);
  if (check.output.find("ct_sass_check: cannot check") != std::string::npos)
    GTEST_SKIP() << "this NVRTC emits SASS the checker does not model: " << check.output;
  EXPECT_NE(check.status, 0) << check.output;
  // The summary line of one kernel: "NAME: N instructions, M violation(s)".
  const auto summary = [&](const std::string& kernel) {
    const std::size_t at = check.output.find(kernel + ": ");
    return at == std::string::npos ? std::string() : check.output.substr(at, check.output.find('\n', at) - at);
  };
  EXPECT_FALSE(summary("leaky_copy").empty()) << check.output;
  EXPECT_EQ(summary("leaky_copy").find(", 0 violation"), std::string::npos) << check.output;
  EXPECT_NE(summary("plain_copy").find(", 0 violation"), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("LDGSTS"), std::string::npos) << check.output;
}

}  // namespace
