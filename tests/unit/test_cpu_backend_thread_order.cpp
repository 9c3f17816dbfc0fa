// The CPU backend's thread order (OPKIT_CPU_THREAD_ORDER): a block's threads start in index order,
// or in reverse, and barriers hold either way. ctest runs this binary once as it is and once with
// the order reversed (tests/CMakeLists.txt), and the kernels' tests with it: a kernel missing a
// barrier between one thread's write and another's read works in index order whenever the reader
// is the higher-numbered thread, and fails backwards, as it may on a GPU.
#include <gtest/gtest.h>

#include <vector>

#include "backend/cpu/block_runner.hpp"
#include "opkit/opkit.hpp"

namespace {

constexpr unsigned kThreads = 64;

TEST(CpuBackendThreadOrder, ThreadsStartInTheConfiguredOrder) {
  auto cpu = opkit::Device::cpu();
  auto module = cpu.compile(opkit::Program(R"cuda(
__global__ void arrival(unsigned* counter, unsigned* order) { order[threadIdx.x] = atomicAdd(counter, 1u); }
)cuda")
                                .name("arrival.cu"));
  auto counter = cpu.alloc<unsigned>(1);
  counter.fill(0);
  auto order = cpu.alloc<unsigned>(kThreads);
  module.kernel("arrival").launch({.grid = 1, .block = kThreads}, counter, order);
  const std::vector<unsigned> seen = order.to_host();
  const bool reverse = opkit::cpu::reverse_thread_order();
  for (unsigned t = 0; t < kThreads; ++t) EXPECT_EQ(seen[t], reverse ? kThreads - 1 - t : t) << "thread " << t;
}

TEST(CpuBackendThreadOrder, ABarrierOrdersWritesBeforeReadsEitherWay) {
  auto cpu = opkit::Device::cpu();
  auto module = cpu.compile(opkit::Program(R"cuda(
__global__ void shift(int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = 1000 + (int)threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = threadIdx.x > 0 ? s[threadIdx.x - 1] : -1;
}
__global__ void shift_without_barrier(int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = 2000 + (int)threadIdx.x;
  out[threadIdx.x] = threadIdx.x > 0 ? s[threadIdx.x - 1] : -1;
}
)cuda")
                                .name("shift.cu"));
  auto out = cpu.alloc<int>(kThreads);
  module.kernel("shift").launch({.grid = 1, .block = kThreads}, out);
  std::vector<int> seen = out.to_host();
  for (unsigned t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], 1000 + static_cast<int>(t) - 1) << "thread " << t;

  // Without the barrier, thread t reads its neighbour's slot before that neighbour ran when the
  // order is reversed (the slot is still zero: this kernel's first launch in the process); in
  // index order it happens to work.
  module.kernel("shift_without_barrier").launch({.grid = 1, .block = kThreads}, out);
  seen = out.to_host();
  const bool reverse = opkit::cpu::reverse_thread_order();
  for (unsigned t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t] >= 2000, !reverse) << "thread " << t << ": " << seen[t];
}

}  // namespace
