// The embedded SHA-256 kernel sources: they compile under NVRTC for every specialisation shape
// (no GPU needed), and run on the CPU backend, whose results must match OpenSSL.
#include <gtest/gtest.h>

#include <random>

#include "nvrtc_required.hpp"
#include "opkit/buffer.hpp"
#include "opkit/error.hpp"
#include "opkit/nvrtc.hpp"
#include "opkit/ops/sha256.hpp"
#include "opkit/target.hpp"
#include "unit/test_sha256_reference.hpp"

namespace {

using opkit::ops::HashAlgo;
using namespace opkit::test;

TEST(Sha256Kernels, FixedLengthProgramCompilesUnderNvrtcForEveryPaddingShape) {
  OPKIT_REQUIRE_NVRTC();
  // One block, the 55/56-byte boundary (one or two tail blocks), whole blocks, unaligned loads.
  struct Shape {
    std::size_t len;
    unsigned load_align;
    HashAlgo algo;
  };
  for (Shape s : {Shape{0, 16, HashAlgo::sha256}, Shape{32, 16, HashAlgo::sha256}, Shape{55, 1, HashAlgo::sha256d},
                  Shape{56, 8, HashAlgo::sha256}, Shape{80, 16, HashAlgo::sha256d}, Shape{1024, 4, HashAlgo::sha256}}) {
    auto compiled =
        opkit::compile(opkit::ops::sha256_fixed_program(s.algo, s.len, s.load_align, 16), opkit::Target::cuda("sm_90"));
    EXPECT_EQ(compiled.format, opkit::BinaryFormat::cubin) << "length " << s.len;
    EXPECT_FALSE(compiled.binary.empty());
  }
}

TEST(Sha256Kernels, VariableLengthProgramCompilesUnderNvrtc) {
  OPKIT_REQUIRE_NVRTC();
  for (HashAlgo algo : {HashAlgo::sha256, HashAlgo::sha256d}) {
    auto compiled = opkit::compile(opkit::ops::sha256_variable_program(algo, 1), opkit::Target::cuda("sm_80"));
    EXPECT_FALSE(compiled.binary.empty());
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

template <class T>
opkit::DeviceBuffer<T> upload(const opkit::Device& device, const std::vector<T>& host) {
  auto buffer = device.alloc<T>(host.size());
  if (!host.empty()) buffer.copy_from(std::span<const T>(host));
  return buffer;
}

TEST(Sha256Kernels, FixedKernelSourceOnTheCpuBackendMatchesOpenSsl) {
  REQUIRE_CPU_BACKEND(cpu);
  std::mt19937_64 rng(std::random_device{}());
  opkit::ops::Sha256Kernel kernel(cpu);
  kernel.set_tuning({.block = 64, .per_thread = 2});
  for (auto [len, algo] : {std::pair{std::size_t{32}, HashAlgo::sha256}, std::pair{std::size_t{61}, HashAlgo::sha256},
                           std::pair{std::size_t{200}, HashAlgo::sha256d}}) {
    const std::size_t count = 131;  // not a multiple of the block: exercises the tail threads
    auto data = random_bytes(rng, len * count);
    auto in = upload(cpu, data);
    auto out = cpu.alloc<std::uint8_t>(count * 32);
    kernel.fixed(algo, in, len, out);
    cpu.synchronize();
    auto digests = out.to_host();
    EXPECT_EQ(first_mismatch(digests, fixed_messages(data, len, count), algo), "") << "length " << len;
  }
}

TEST(Sha256Kernels, VariableKernelSourceOnTheCpuBackendMatchesOpenSslForLengths0To300) {
  REQUIRE_CPU_BACKEND(cpu);
  std::mt19937_64 rng(std::random_device{}());
  std::vector<std::size_t> lengths;
  for (std::size_t len = 0; len <= 300; ++len) lengths.push_back(len);
  std::shuffle(lengths.begin(), lengths.end(), rng);
  auto batch = make_variable_batch(rng, lengths);
  auto data = upload(cpu, batch.data);
  auto offsets = upload(cpu, batch.offsets);
  auto out = cpu.alloc<std::uint8_t>(lengths.size() * 32);
  opkit::ops::Sha256Kernel kernel(cpu);
  for (HashAlgo algo : {HashAlgo::sha256, HashAlgo::sha256d}) {
    kernel.variable(algo, data, offsets, out);
    EXPECT_EQ(first_mismatch(out.to_host(), variable_messages(batch), algo), "");
  }
}

TEST(Sha256Kernels, VariableKernelReportsBadOffsetsFoundOnTheDevice) {
  REQUIRE_CPU_BACKEND(cpu);
  auto data = upload(cpu, std::vector<std::uint8_t>(100, 1));
  auto offsets = upload(cpu, std::vector<std::uint64_t>{0, 10, 5, 20});
  auto out = cpu.alloc<std::uint8_t>(3 * 32);
  try {
    opkit::ops::Sha256Kernel(cpu).variable(HashAlgo::sha256, data, offsets, out);
    FAIL() << "backwards offsets were accepted";
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument);
    EXPECT_NE(e.message().find("message 1"), std::string::npos) << e.message();
  }
}

}  // namespace
