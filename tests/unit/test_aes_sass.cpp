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

}  // namespace
