// The constant-time check of the AES kernels' machine code: the embedded AES source compiles
// under NVRTC for sm_90, and tools/aes_sass_check.py finds no shared or local memory access (but
// in aes_ctr_batch and aes_setup_batch, which stage their IO through shared memory), no
// register-indexed constant load,
// and no load in the AES rounds whose address could depend on the state (docs/ciphers-aes.md
// explains the rules); tools/ct_sass_check.py follows every loaded value of aes_ctr_batch and finds
// no address or branch that depends on a secret one. The SASS part needs cuobjdump ($CUOBJDUMP or
// PATH) and python3, and skips without them.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

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
  EXPECT_NE(check.output.find("aes_ctr_batch: round loop"), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("aes_sass_check: ok"), std::string::npos) << check.output;
}

// Runs tools/ct_sass_check.py on `kernel` of the AES program for sm_90, its parameters at the
// constant-bank offsets `public_params` (and `public_fields`, loads through a parameter) public,
// everything else it loads secret, and expects no address or branch that depends on a secret.
void expect_no_secret_address_or_branch(const std::string& kernel, std::initializer_list<const char*> public_params,
                                        const std::string& public_fields = "") {
  if (const std::string missing = opkit::test::sass_tools_missing(); !missing.empty()) GTEST_SKIP() << missing;
  const opkit::CompiledProgram compiled = opkit::compile(opkit::ops::aes::aes_program(), opkit::Target::cuda("sm_90"));
  std::string arguments = "--kernel " + kernel;
  if (!public_fields.empty()) arguments += " --public-field " + public_fields;
  for (const char* param : public_params) arguments += std::string(" --public-param ") + param;
  const opkit::test::SassCheck check = opkit::test::run_sass_check("ct_sass_check.py", compiled, arguments);
  if (check.output.find("ct_sass_check: cannot check") != std::string::npos)
    GTEST_SKIP() << "this NVRTC emits SASS the checker does not model: " << check.output;
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_NE(check.output.find(kernel + ": "), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("ct_sass_check: ok"), std::string::npos) << check.output;
}

// aes_ctr_batch's parameters on sm_90 (constant bank 0 from 0x210, eight bytes each): states
// 0x210, in 0x218, out 0x220, offsets 0x228, fixed_bytes 0x230, count 0x238, units_per_message
// 0x240, unit_starts 0x248, total_units 0x250, verdicts 0x258. The lengths and counts, the offset
// and unit tables and the verdicts are public: named, with the high halves of the 64-bit scalars
// (ptxas reads some of them apart), so that what is loaded through the tables is public. So are
// an AesState's rounds, counter_bits and counter (bytes 0xf0..0x108 of each state, through
// `states`); its round keys (bytes 0..0xf0) and everything loaded from in and from shared memory
// (the data and the keystream) stay secret.
TEST(AesSass, BatchKernelHasNoAddressOrBranchThatDependsOnKeysOrData) {
  OPKIT_REQUIRE_NVRTC();
  expect_no_secret_address_or_branch(
      "aes_ctr_batch",
      {"0x228", "0x230", "0x234", "0x238", "0x23c", "0x240", "0x244", "0x248", "0x250", "0x254", "0x258"},
      "0x210:0xf0:0x108");
}

// aes_setup_batch expands keys into shared memory and stores the block's states from there. Its
// parameters on sm_90: states 0x210, keys 0x218, key_bytes 0x220, ivs 0x228, iv_bytes 0x230, mode
// 0x234, count 0x238. The sizes, the mode and the count are public; the keys, and the IVs with
// them, stay secret: no address or branch may depend on them.
TEST(AesSass, SetupKernelHasNoAddressOrBranchThatDependsOnKeys) {
  OPKIT_REQUIRE_NVRTC();
  expect_no_secret_address_or_branch("aes_setup_batch", {"0x220", "0x230", "0x234", "0x238", "0x23c"});
}

// Bulk GHASH on the tensor cores: the matrix kernels (aes_ghash_mma_products, _fragments), which
// read H, and aes_ghash_mma, which keeps the matrix in shared memory and reads the data. Its
// parameters on sm_90: states 0x210, data 0x218, first_chunk 0x220, chunks 0x228,
// chunks_per_message 0x230, fragments 0x238, row_powers 0x240, powers 0x248. The chunk numbers are
// public; H, the matrix, the powers and the data stay secret.
TEST(AesSass, TensorCoreGhashHasNoAddressOrBranchThatDependsOnHOrData) {
  OPKIT_REQUIRE_NVRTC();
  expect_no_secret_address_or_branch("aes_ghash_mma", {"0x220", "0x224", "0x228", "0x22c", "0x230", "0x234"});
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
  EXPECT_FALSE(check.summary("leaky_copy").empty()) << check.output;
  EXPECT_EQ(check.summary("leaky_copy").find(", 0 violation"), std::string::npos) << check.output;
  EXPECT_NE(check.summary("plain_copy").find(", 0 violation"), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("LDGSTS"), std::string::npos) << check.output;
}

}  // namespace
