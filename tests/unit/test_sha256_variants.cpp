// The -D variant switches of the SHA-256 kernels (sha256_core.cuh): each non-default setting still
// compiles under NVRTC for sm_90. (They change device code only; it is checked on the GPU by
// bench/sha256_bench.cpp, which compares every variant it times with the CPU path.)
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "nvrtc_required.hpp"
#include "opkit/nvrtc.hpp"
#include "opkit/ops/sha256.hpp"
#include "opkit/target.hpp"

namespace {

using opkit::ops::HashAlgo;
using Switches = std::vector<std::pair<const char*, int>>;

// Every switch away from its default at least once.
const std::vector<Switches>& non_default_switches() {
  static const std::vector<Switches> all = {
      {{"SHA256_ADD_ON_FMA", 0}},
      {{"SHA256_K_ON_FMA", 0}},
  };
  return all;
}

opkit::Program variant_program(HashAlgo algo, std::size_t len, const Switches& switches) {
  opkit::Program program = opkit::ops::sha256_fixed_program(algo, len, 16, 16);
  for (const auto& [macro, value] : switches) program.define(macro, value);
  return program;
}

TEST(Sha256Variants, EverySwitchCompilesUnderNvrtcForSm90) {
  OPKIT_REQUIRE_NVRTC();
  // sha256d of 80 bytes: a first block, a tail block with padding words, and the second hash.
  for (const Switches& switches : non_default_switches()) {
    auto compiled = opkit::compile(variant_program(HashAlgo::sha256d, 80, switches), opkit::Target::cuda("sm_90"));
    EXPECT_EQ(compiled.format, opkit::BinaryFormat::cubin) << switches.front().first;
    EXPECT_FALSE(compiled.binary.empty());
  }
}

}  // namespace
