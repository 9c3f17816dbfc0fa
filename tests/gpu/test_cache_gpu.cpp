// The kernel cache on a GPU: a binary from the disk cache runs exactly like a fresh compile, a
// damaged entry is recompiled and replaced on the way to a working kernel, and one process
// compiles a Program once. Results are checked against a CPU reference on fresh random inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "opkit/opkit.hpp"
#include "opkit/registry.hpp"

namespace {

namespace fs = std::filesystem;

// y[i] = a * x[i] + SALT: the salt makes each test's Program (and cache entry) its own.
opkit::Program saxpy_program(unsigned salt) {
  return opkit::Program(
             "__global__ void saxpy(int n, float a, const float* x, float* y) {\n"
             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
             "  if (i < n) y[i] = a * x[i] + (float)(SALT % 7);\n"
             "}\n")
      .name("saxpy.cu")
      .define("SALT", salt);
}

unsigned fresh_salt() {
  return std::random_device{}();
}

// Runs saxpy on random inputs and compares with the same arithmetic on the CPU.
void expect_saxpy_correct(const opkit::Device& gpu, const opkit::Module& module, unsigned salt) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  const int n = 1000 + static_cast<int>(rng() % 3000);
  const float a = dist(rng);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = dist(rng);
  auto dx = gpu.alloc<float>(x.size());
  auto dy = gpu.alloc<float>(x.size());
  dx.copy_from(x);
  const opkit::LaunchConfig config{
      .grid = static_cast<std::uint32_t>((n + 255) / 256), .block = 256, .shared_bytes = 0, .stream = nullptr};
  module.kernel("saxpy").launch(config, n, a, dx, dy);
  std::vector<float> y = dy.to_host();
  for (int i = 0; i < n; ++i) {
    // NVRTC may fuse the multiply-add (one rounding instead of two): allow a few ulps of the terms.
    const float product = a * x[static_cast<std::size_t>(i)];
    const float expected = product + static_cast<float>(salt % 7);
    ASSERT_NEAR(y[static_cast<std::size_t>(i)], expected, 1e-5f * (std::abs(product) + 7.0f)) << "i=" << i;
  }
}

// Where Device::build stores this program for this GPU, or nullopt when the cache is off.
std::optional<fs::path> entry_for(const opkit::Device& gpu, const opkit::Program& program) {
  const auto& cache = opkit::KernelCache::global();
  if (!cache.enabled()) return std::nullopt;
  return cache.entry_path(opkit::cache_key(program, gpu.target()));
}

TEST(CacheGpu, ACachedBinaryRunsLikeAFreshCompile) {
  OPKIT_SKIP_WITHOUT_GPU();
  const unsigned salt = fresh_salt();
  auto program = saxpy_program(salt);
  auto entry = entry_for(gpu, program);
  if (!entry) GTEST_SKIP() << "the kernel cache is off: " << opkit::KernelCache::global().last_error();
  ASSERT_FALSE(fs::exists(*entry));
  auto compiled = gpu.build(program);  // miss: NVRTC, then stored
  ASSERT_TRUE(fs::exists(*entry));
  auto cached = gpu.build(program);  // hit: from the disk
  EXPECT_EQ(cached.binary, compiled.binary);
  EXPECT_EQ(cached.lowered_names, compiled.lowered_names);
  expect_saxpy_correct(gpu, gpu.load(cached), salt);
  fs::remove(*entry);
}

TEST(CacheGpu, ADamagedEntryIsRecompiledReplacedAndRuns) {
  OPKIT_SKIP_WITHOUT_GPU();
  const unsigned salt = fresh_salt();
  auto program = saxpy_program(salt);
  auto entry = entry_for(gpu, program);
  if (!entry) GTEST_SKIP() << "the kernel cache is off: " << opkit::KernelCache::global().last_error();
  auto good = gpu.build(program);
  // Flip bytes inside the cubin: a load of this would fail or run garbage, so it must be a miss.
  {
    std::fstream file(*entry, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(fs::file_size(*entry) / 2));
    file.write("\xde\xad\xbe\xef", 4);
  }
  auto rebuilt = gpu.build(program);
  EXPECT_EQ(rebuilt.binary, good.binary);
  expect_saxpy_correct(gpu, gpu.load(rebuilt), salt);
  // The entry was replaced by a good one.
  auto again = opkit::KernelCache::global().load(entry->stem().string());
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->binary, good.binary);
  fs::remove(*entry);
}

TEST(CacheGpu, OneProcessCompilesAProgramOnce) {
  OPKIT_SKIP_WITHOUT_GPU();
  const unsigned salt = fresh_salt();
  auto program = saxpy_program(salt);
  auto entry = entry_for(gpu, program);
  if (!entry) GTEST_SKIP() << "the kernel cache is off: " << opkit::KernelCache::global().last_error();
  auto first = gpu.compile(program);
  ASSERT_TRUE(fs::exists(*entry));
  fs::remove(*entry);
  // The second compile is served in-process: neither NVRTC nor the disk cache is asked again.
  auto second = gpu.compile(opkit::Program(program));
  EXPECT_FALSE(fs::exists(*entry)) << "the same Program was compiled (and stored) twice in one process";
  EXPECT_EQ(&first.program(), &second.program());
  expect_saxpy_correct(gpu, second, salt);
}

}  // namespace
