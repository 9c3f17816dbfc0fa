// The constant-time check of the ChaCha20 and ChaCha20-Poly1305 kernels' machine code: every
// build the device path makes of chacha20_bulk.cu and chacha20_batch.cu (aligned or not,
// encrypting or decrypting, AEAD or not) compiles under NVRTC for sm_90, and
// tools/ct_sass_check.py, following every loaded value through registers, predicates and local
// memory, finds no memory address and no branch that depends on one (docs/ciphers.md, "Constant
// time"). The checker is shown to catch a table lookup, a shared-memory lookup and a
// data-dependent branch. The SASS part needs cuobjdump ($CUOBJDUMP or PATH) and python3, and
// skips without them.
#include <gtest/gtest.h>

#include <string>

#include "nvrtc_required.hpp"
#include "opkit/ops/cipher.hpp"
#include "opkit/target.hpp"
#include "unit/sass_check.hpp"

namespace {

opkit::CompiledProgram sm90(const opkit::Program& program) {
  return opkit::compile(program, opkit::Target::cuda("sm_90"));
}

TEST(Chacha20Sass, BulkKernelsHaveNoAddressOrBranchThatDependsOnLoadedData) {
  OPKIT_REQUIRE_NVRTC();
  if (const std::string missing = opkit::test::sass_tools_missing(); !missing.empty()) GTEST_SKIP() << missing;
  for (bool aligned : {true, false}) {
    for (bool decrypt : {false, true}) {
      const opkit::test::SassCheck check =
          opkit::test::run_sass_check("ct_sass_check.py", sm90(opkit::ops::chacha20_bulk_program(aligned, decrypt)));
      const std::string build = std::string(aligned ? "aligned" : "unaligned") + (decrypt ? " decrypt" : " encrypt");
      if (check.output.find("ct_sass_check: cannot check") != std::string::npos)
        GTEST_SKIP() << "this NVRTC emits SASS the checker does not model: " << check.output;
      EXPECT_EQ(check.status, 0) << build << "\n" << check.output;
      for (const char* kernel : {"chacha20_xor", "chacha20_xor_tail", "chacha20_poly1305_setup",
                                 "chacha20_poly1305_main", "chacha20_poly1305_finish"})
        EXPECT_NE(check.output.find(std::string(kernel) + "P"), std::string::npos)
            << build << ": " << kernel << " unchecked";
      EXPECT_NE(check.output.find("ct_sass_check: ok"), std::string::npos) << build << "\n" << check.output;
    }
  }
}

// The batch kernel reads each message's offsets and AAD offsets (public) from memory: its
// parameters `offsets` and `aad_offsets`, at 0x230 and 0x248 of constant bank 0 on sm_90
// (parameters start at 0x210, eight bytes each). Declared public, everything else it loads (keys,
// nonces, messages, AAD) is secret as in the bulk kernels. The message index that selects an
// offset is computed from `lanes_log2` (0x268, threads per message), which the checker sees as a
// parameter the offsets pointer derives from, so it is named too: it is no pointer, and a load
// through keys + 32 i (also derived from `keys`) stays secret. The decrypting AEAD builds read
// each message's verdict back through `verdicts` (0x270) to decide whether its lanes zero their
// output: the verdict is public (the call reports it), and that parameter is declared so; the
// comparison that computes it (a select) and the expected tags (through `tags`) stay secret.
TEST(Chacha20Sass, BatchKernelsHaveNoAddressOrBranchThatDependsOnSecretData) {
  OPKIT_REQUIRE_NVRTC();
  if (const std::string missing = opkit::test::sass_tools_missing(); !missing.empty()) GTEST_SKIP() << missing;
  for (bool aead : {false, true}) {
    for (bool aligned : {true, false}) {
      for (bool decrypt : {false, true}) {
        const opkit::test::SassCheck check = opkit::test::run_sass_check(
            "ct_sass_check.py", sm90(opkit::ops::chacha20_batch_program(aead, aligned, decrypt)),
            "--public-param 0x230 --public-param 0x248 --public-param 0x268 --public-param 0x270");
        if (check.output.find("ct_sass_check: cannot check") != std::string::npos)
          GTEST_SKIP() << "this NVRTC emits SASS the checker does not model: " << check.output;
        EXPECT_EQ(check.status, 0) << (aead ? "aead " : "") << (aligned ? "aligned " : "unaligned ")
                                   << (decrypt ? "decrypt\n" : "encrypt\n") << check.output;
        EXPECT_NE(check.output.find("chacha20_batchP"), std::string::npos) << check.output;
      }
    }
  }
}

TEST(Chacha20Sass, TheCheckerCatchesLookupsAndBranchesOnLoadedData) {
  OPKIT_REQUIRE_NVRTC();
  if (const std::string missing = opkit::test::sass_tools_missing(); !missing.empty()) GTEST_SKIP() << missing;
  const opkit::Program leaky(R"(
    extern "C" __global__ void table_lookup(const unsigned char* in, unsigned* out, const unsigned* table) {
      out[threadIdx.x] = table[in[threadIdx.x]];
    }
    extern "C" __global__ void shared_lookup(const unsigned char* in, unsigned* out) {
      __shared__ unsigned t[256];
      t[threadIdx.x] = threadIdx.x * 3u;
      __syncthreads();
      out[threadIdx.x] = t[in[threadIdx.x]];
    }
    extern "C" __global__ void branch(const unsigned* in, unsigned* out) {
      if (in[threadIdx.x] & 1u) out[threadIdx.x] = 1u;
    }
    extern "C" __global__ void select(const unsigned* in, unsigned* out) {
      const unsigned x = in[threadIdx.x];
      out[threadIdx.x] = (x & 1u) ? 5u : 7u * x;
    })");
  const opkit::test::SassCheck check = opkit::test::run_sass_check("ct_sass_check.py", sm90(leaky));
  if (check.output.find("ct_sass_check: cannot check") != std::string::npos)
    GTEST_SKIP() << "this NVRTC emits SASS the checker does not model: " << check.output;
  EXPECT_NE(check.status, 0) << check.output;
  for (const char* kernel : {"table_lookup", "shared_lookup", "branch"}) {
    EXPECT_FALSE(check.summary(kernel).empty()) << kernel << " unchecked\n" << check.output;
    EXPECT_EQ(check.summary(kernel).find(", 0 violation"), std::string::npos) << check.output;
  }
  EXPECT_NE(check.summary("select").find(", 0 violation"), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("address from loaded data"), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("predicated on loaded data"), std::string::npos) << check.output;
}

}  // namespace
