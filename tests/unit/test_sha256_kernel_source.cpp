// The kernel files themselves (sha256_fixed.cu, sha256_var.cu) compiled into this test by the
// host compiler with a minimal stand-in for CUDA's launch variables, and launched as a grid loop:
// the whole kernel source against OpenSSL without a GPU and without depending on the CPU backend.
#include <gtest/gtest.h>

#include <random>

#include "unit/test_sha256_reference.hpp"

namespace kernel_source {

struct Dim {
  unsigned x = 0, y = 0, z = 0;
};
Dim blockIdx, blockDim, threadIdx;  // one thread at a time, so plain globals do
unsigned long long atomicMin(unsigned long long* address, unsigned long long value) {
  const unsigned long long old = *address;
  if (value < old) *address = value;
  return old;
}

#define __global__  // NOLINT(bugprone-reserved-identifier): the kernels' CUDA keyword, compiled on the host
// 100 bytes: one whole block and a one-block tail; 4-byte loads, byte stores, 2 messages a thread.
#define MSG_LEN 100ull
#define LOAD_ALIGN 4
#define STORE_ALIGN 1
#define PER_THREAD 2
#include "ops/sha256/kernels/sha256_fixed.cu"
#undef STORE_ALIGN
#define STORE_ALIGN 4
#include "ops/sha256/kernels/sha256_var.cu"
#undef __global__

// std::uint64_t is unsigned long here; the kernel, like CUDA code, says unsigned long long.
const unsigned long long* offsets_of(const std::vector<std::uint64_t>& offsets) {
  static_assert(sizeof(std::uint64_t) == sizeof(unsigned long long));
  return reinterpret_cast<const unsigned long long*>(offsets.data());
}

// Runs `kernel` for every thread of a 1-D grid.
template <class Kernel>
void launch(unsigned grid, unsigned block, Kernel kernel) {
  blockDim = {block, 1, 1};
  for (unsigned b = 0; b < grid; ++b)
    for (unsigned t = 0; t < block; ++t) {
      blockIdx = {b, 0, 0};
      threadIdx = {t, 0, 0};
      kernel();
    }
}

}  // namespace kernel_source

namespace {

using namespace opkit::test;

TEST(Sha256KernelSource, FixedKernelOnTheHostMatchesOpenSsl) {
  std::mt19937_64 rng(std::random_device{}());
  const std::size_t count = 45;  // not a multiple of block * PER_THREAD: tail threads and clamping
  auto data = random_bytes(rng, 100 * count);
  std::vector<std::uint8_t> digests(32 * count);
  kernel_source::launch(3, 8, [&] { kernel_source::sha256_fixed(data.data(), digests.data(), count); });
  EXPECT_EQ(first_mismatch(digests, fixed_messages(data, 100, count), opkit::ops::HashAlgo::sha256), "");
}

TEST(Sha256KernelSource, VariableKernelOnTheHostMatchesOpenSslForLengths0To300) {
  std::mt19937_64 rng(std::random_device{}());
  std::vector<std::size_t> lengths;
  for (std::size_t len = 0; len <= 300; ++len) lengths.push_back(len);
  std::shuffle(lengths.begin(), lengths.end(), rng);
  auto batch = make_variable_batch(rng, lengths);
  std::vector<std::uint8_t> digests(32 * lengths.size());
  unsigned long long bad = ~0ull;
  kernel_source::launch(10, 32, [&] {
    kernel_source::sha256_var(batch.data.data(), batch.data.size(), kernel_source::offsets_of(batch.offsets),
                              lengths.size(), digests.data(), 0, &bad);
  });
  EXPECT_EQ(bad, ~0ull);
  EXPECT_EQ(first_mismatch(digests, variable_messages(batch), opkit::ops::HashAlgo::sha256), "");
}

TEST(Sha256KernelSource, VariableKernelRecordsTheFirstBadMessage) {
  std::vector<std::uint8_t> data(50, 1);
  std::vector<std::uint64_t> offsets{0, 10, 60, 20, 30};
  std::vector<std::uint8_t> digests(4 * 32);
  unsigned long long bad = ~0ull;
  kernel_source::launch(1, 4, [&] {
    kernel_source::sha256_var(data.data(), data.size(), kernel_source::offsets_of(offsets), 4, digests.data(), 100,
                              &bad);
  });
  EXPECT_EQ(bad, 101u);  // message 1 runs past the end (message 2 backwards); plus first_index
}

}  // namespace
