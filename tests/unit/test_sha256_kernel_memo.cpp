// Sha256Kernel reuses its built kernels: a call with the parameters of an earlier one (device,
// algorithm, length, alignments, tuning) builds no program and hashes no source, and still hashes
// right.
#include <gtest/gtest.h>

#include <random>

#include "opkit/buffer.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/sha256.hpp"
#include "ops/sha256/sha256_kernel_builds.hpp"
#include "unit/test_sha256_reference.hpp"

namespace {

using opkit::ops::HashAlgo;
using opkit::ops::detail::sha256_kernel_builds;
using namespace opkit::test;

TEST(Sha256KernelMemo, ARepeatedCallBuildsNothingAndMatchesOpenSsl) {
  std::optional<opkit::Device> cpu;
  try {
    cpu = opkit::Device::cpu();
  } catch (const opkit::Error& e) {
    GTEST_SKIP() << "no CPU backend: " << e.message();
  }
  std::mt19937_64 rng(std::random_device{}());
  constexpr std::size_t len = 45, count = 70;
  auto in = cpu->alloc<std::uint8_t>(len * count);
  auto out = cpu->alloc<std::uint8_t>(count * 32);
  for (int call = 0; call < 3; ++call) {
    const std::size_t before = sha256_kernel_builds();
    const auto data = random_bytes(rng, len * count);
    in.copy_from(std::span<const std::uint8_t>(data));
    opkit::ops::Sha256Kernel(*cpu).fixed(HashAlgo::sha256d, in, len, out);  // a new Sha256Kernel each call
    cpu->synchronize();
    EXPECT_EQ(first_mismatch(out.to_host(), fixed_messages(data, len, count), HashAlgo::sha256d), "") << call;
    if (call == 0) {
      EXPECT_LE(sha256_kernel_builds() - before, 1u);
    } else {
      EXPECT_EQ(sha256_kernel_builds(), before) << "call " << call << " rebuilt a kernel it had built before";
    }
  }
}

}  // namespace
