// The mining kernel sources: they compile under NVRTC for every job shape (no GPU needed), and on
// the CPU backend they find the same lowest nonce as the brute-force reference.
#include <gtest/gtest.h>

#include <optional>
#include <random>

#include "nvrtc_required.hpp"
#include "opkit/error.hpp"
#include "opkit/nvrtc.hpp"
#include "opkit/ops/pow.hpp"
#include "opkit/target.hpp"
#include "ops/pow/kernel_programs.hpp"
#include "ops/pow/mine_plan.hpp"
#include "unit/test_pow_reference.hpp"

namespace {

using namespace opkit::ops;
namespace detail = opkit::ops::detail;

TEST(PowKernels, BitcoinKernelCompilesUnderNvrtcSpecialisedAndGeneric) {
  OPKIT_REQUIRE_NVRTC();
  BitcoinJob job;
  job.header = opkit::test::real_headers()[0].header;
  const auto plan = detail::make_plan(job);
  for (bool specialised : {true, false}) {
    const auto compiled = opkit::compile(detail::bitcoin_program(plan, specialised, {}), opkit::Target::cuda("sm_90"));
    EXPECT_EQ(compiled.format, opkit::BinaryFormat::cubin);
    EXPECT_FALSE(compiled.binary.empty());
  }
}

TEST(PowKernels, DataKernelCompilesUnderNvrtcForOneAndTwoTailBlocks) {
  OPKIT_REQUIRE_NVRTC();
  // (string length, digits): digits split across two tail blocks; a whole block absorbed into
  // the midstate and 20 digits in one tail block. (Each NVRTC compile takes seconds.)
  for (auto [length, digits] : {std::pair{60, 10}, std::pair{100, 20}}) {
    DataJob job{std::string(static_cast<std::size_t>(length), 'a'), 16, 0, std::nullopt};
    const auto compiled =
        opkit::compile(detail::data_program(detail::make_plan(job), digits, {}), opkit::Target::cuda("sm_90"));
    EXPECT_FALSE(compiled.binary.empty()) << length << " " << digits;
  }
}

// The CPU backend device, or a skip saying why there is none.
#define REQUIRE_CPU_BACKEND(device)                    \
  std::optional<opkit::Device> device##_holder;        \
  try {                                                \
    device##_holder = opkit::Device::cpu();            \
  } catch (const opkit::Error& e) {                    \
    GTEST_SKIP() << "no CPU backend: " << e.message(); \
  }                                                    \
  const opkit::Device& device = *device##_holder

MineOptions on(const opkit::Device& device) {
  MineOptions o;
  o.devices = {device};
  return o;
}

TEST(PowKernels, BitcoinKernelOnTheCpuBackendFindsTheRealNonce) {
  REQUIRE_CPU_BACKEND(cpu);
  const auto h = opkit::test::real_headers()[1];
  BitcoinJob job;
  job.header = h.header;
  job.start = h.nonce - (1u << 19);
  job.count = 1u << 20;
  const MineResult r = mine(job, on(cpu));
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.nonce, h.nonce);
  EXPECT_EQ(r.hash_hex, h.hash);
}

TEST(PowKernels, KernelsOnTheCpuBackendMatchBruteForceOnRandomJobs) {
  REQUIRE_CPU_BACKEND(cpu);
  std::mt19937_64 rng(21);
  for (int trial = 0; trial < 4; ++trial) {
    BitcoinJob job;
    for (auto& b : job.header.bytes) b = static_cast<std::uint8_t>(rng());
    job.target = Target::from_leading_zero_bits(9);
    job.start = rng() % 0xfff00000u;
    job.count = 4000;
    const auto expected = opkit::test::brute_force_bitcoin(job.header, *job.target, job.start, job.start + 3999);
    const MineResult r = mine(job, on(cpu));
    ASSERT_EQ(r.found, expected.has_value()) << trial;
    if (expected) {
      EXPECT_EQ(r.nonce, *expected) << trial;
    }
  }
  // Data: one and two tail blocks, and a digit-count change inside the range.
  for (std::size_t length : {3u, 58u, 70u, 127u}) {
    DataJob job{std::string(length, 'q'), 8, 999'999'900, 3000};
    const auto expected = opkit::test::brute_force_data(job.data, 8, job.start, job.start + 2999);
    const MineResult r = mine(job, on(cpu));
    ASSERT_EQ(r.found, expected.has_value()) << length;
    if (expected) {
      EXPECT_EQ(r.nonce, *expected) << length;
    }
  }
}

// A target whose top word equals the top word of the first nonce's hash, with zeros below:
// that nonce passes the kernel's quick test but not the host's full compare.
TEST(PowKernels, CandidateThatOnlyMatchesTheTopWordIsSkippedOnTheCpuBackend) {
  REQUIRE_CPU_BACKEND(cpu);
  BitcoinJob job;
  job.header = opkit::test::real_headers()[0].header;
  job.start = 12345;
  job.count = 2000;
  const opkit::Sha256Digest first = bitcoin_hash(job.header, 12345);
  Target t;
  for (int i = 0; i < 4; ++i) t.bytes[static_cast<std::size_t>(i)] = first[31 - static_cast<std::size_t>(i)];
  job.target = t;
  const auto expected = opkit::test::brute_force_bitcoin(job.header, t, 12345, 12345 + 1999);
  ASSERT_NE(expected, std::optional<std::uint64_t>(12345));
  const MineResult r = mine(job, on(cpu));
  ASSERT_EQ(r.found, expected.has_value());
  if (expected) {
    EXPECT_EQ(r.nonce, *expected);
  }
}

}  // namespace
