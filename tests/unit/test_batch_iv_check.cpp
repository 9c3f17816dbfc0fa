// The device-side check of cipher batch IVs (kernels/batch_iv_check.cu), which only a GPU runs
// for real: its embedded source compiles under NVRTC for sm_90 and defines the kernel the
// launcher names, so a GPU machine does not meet a compile error first. Its behaviour is tested
// on every device target by the conformance suite (CipherDeviceKeys.Chacha20Counters...).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "nvrtc_required.hpp"
#include "opkit/program.hpp"
#include "opkit/target.hpp"
#include "ops/cipher/cipher_kernels.hpp"

namespace {

TEST(BatchIvCheck, KernelCompilesForSm90UnderNvrtc) {
  OPKIT_REQUIRE_NVRTC();
  const std::string source = opkit::ops::detail::cipher_source("batch_iv_check.cu");
  const opkit::CompiledProgram compiled =
      opkit::compile(opkit::Program(source).name("batch_iv_check.cu"), opkit::Target::cuda("sm_90"));
  ASSERT_EQ(compiled.format, opkit::BinaryFormat::cubin);
  const std::string name = "chacha20_counter_check";
  EXPECT_NE(std::search(compiled.binary.begin(), compiled.binary.end(), name.begin(), name.end()),
            compiled.binary.end())
      << "the cubin has no symbol " << name;
  EXPECT_EQ(compiled.log, "") << "NVRTC warned";
}

}  // namespace
