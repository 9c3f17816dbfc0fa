// The -D variant switches of the SHA-256 kernels (sha256_core.cuh): each non-default setting still
// compiles under NVRTC for sm_90, and the kernel source with the switches that change its host
// code runs on the CPU backend with OpenSSL's digests. (Their device code is checked on the GPU
// by bench/sha256_bench.cpp, which compares every variant it times with the CPU path.)
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "nvrtc_required.hpp"
#include "opkit/buffer.hpp"
#include "opkit/error.hpp"
#include "opkit/module.hpp"
#include "opkit/nvrtc.hpp"
#include "opkit/ops/sha256.hpp"
#include "unit/test_sha256_reference.hpp"

namespace {

using opkit::ops::HashAlgo;
using namespace opkit::test;
using Switches = std::vector<std::pair<const char*, int>>;

// Every switch away from its default at least once.
const std::vector<Switches>& non_default_switches() {
  static const std::vector<Switches> all = {
      {{"SHA256_ADD_ON_FMA", 0}, {"SHA256_SHIFT_ON_FMA", 0}},
      {{"SHA256_ROTATE_ON_FMA", 15}},
      {{"SHA256_FOLD_CONSTANTS", 0}},
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
    auto compiled = opkit::nvrtc::compile(variant_program(HashAlgo::sha256d, 80, switches), "sm_90");
    EXPECT_EQ(compiled.format, opkit::BinaryFormat::cubin) << switches.front().first;
    EXPECT_FALSE(compiled.binary.empty());
  }
}

// SHA256_FOLD_CONSTANTS=0 changes the host code of T1 too.
TEST(Sha256Variants, KernelSourceWithConstSwitchMatchesOpenSslOnTheCpuBackend) {
  std::optional<opkit::Device> cpu;
  try {
    cpu = opkit::Device::cpu();
  } catch (const opkit::Error& e) {
    GTEST_SKIP() << "no CPU backend: " << e.message();
  }
  std::mt19937_64 rng(std::random_device{}());
  const std::size_t count = 70;
  for (auto [len, algo] :
       {std::pair{std::size_t{32}, HashAlgo::sha256}, std::pair{std::size_t{80}, HashAlgo::sha256d}}) {
    const auto data = random_bytes(rng, len * count);
    auto in = cpu->alloc<std::uint8_t>(data.size());
    in.copy_from(std::span<const std::uint8_t>(data));
    auto out = cpu->alloc<std::uint8_t>(count * 32);
    opkit::Kernel kernel =
        cpu->compile(variant_program(algo, len, {{"SHA256_FOLD_CONSTANTS", 0}})).kernel("sha256_fixed");
    kernel.launch({.grid = 3, .block = 32}, in, out, static_cast<unsigned long long>(count));
    cpu->synchronize();
    EXPECT_EQ(first_mismatch(out.to_host(), fixed_messages(data, len, count), algo), "") << "length " << len;
  }
}

}  // namespace
