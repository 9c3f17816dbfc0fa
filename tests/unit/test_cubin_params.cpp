// The kernel parameter lists read from a cubin's .nv.info sections (src/backend/cuda/cubin_params):
// right for every parameter kind NVRTC lays out, and safe on damaged images.
#include <gtest/gtest.h>

#include <random>

#include "backend/cuda/cubin_params.hpp"
#include "nvrtc_required.hpp"
#include "opkit/program.hpp"
#include "opkit/target.hpp"

namespace {

TEST(CubinParams, EveryParameterKindHasItsSizeInOrder) {
  OPKIT_REQUIRE_NVRTC();
  auto compiled = opkit::compile(opkit::Program(R"(
    struct Triple { int a, b, c; };
    __global__ void k(float* a, int n, double d, char c, long long q, float4 v, Triple t) {
      a[threadIdx.x] = n + d + c + q + v.x + t.b;
    }
    __global__ void none() {}
  )"),
                                 opkit::Target::cuda("sm_90"));
  ASSERT_EQ(compiled.format, opkit::BinaryFormat::cubin);
  const auto kernels = opkit::cuda::cubin_param_sizes(compiled.binary);
  const auto k = kernels.find(compiled.lowered_names.at("k"));
  ASSERT_NE(k, kernels.end());
  EXPECT_EQ(k->second, (std::vector<std::size_t>{8, 4, 8, 1, 8, 16, 12}));
  const auto none = kernels.find(compiled.lowered_names.at("none"));
  ASSERT_NE(none, kernels.end());
  EXPECT_TRUE(none->second.empty());
}

TEST(CubinParams, DamagedImagesGiveNoListAndNoOutOfBoundsRead) {
  OPKIT_REQUIRE_NVRTC();
  auto compiled =
      opkit::compile(opkit::Program("__global__ void k(int* a, int b) { a[0] = b; }"), opkit::Target::cuda("sm_90"));
  const std::vector<std::uint8_t>& good = compiled.binary;
  EXPECT_TRUE(opkit::cuda::cubin_param_sizes({}).empty());
  for (std::size_t keep = 0; keep < good.size(); keep += 1 + keep / 8)
    (void)opkit::cuda::cubin_param_sizes(std::span(good.data(), keep));  // ASan/UBSan watch these
  std::mt19937 rng(std::random_device{}());
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::uint8_t> bad = good;
    for (int flips = 1 + static_cast<int>(rng() % 4); flips > 0; --flips) bad[rng() % bad.size()] = rng();
    for (const auto& [name, sizes] : opkit::cuda::cubin_param_sizes(bad))
      EXPECT_LE(sizes.size(), 4096u) << name;  // only what 16-bit ordinals can describe
  }
}

}  // namespace
