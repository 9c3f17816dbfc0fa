// Stopping a CPU-backend launch from its caller (opkit/interrupt.hpp): a kernel that never ends,
// with or without barriers, is left by every worker thread once the caller's InterruptCheck says
// stop; the launch throws Error(Errc::interrupted), the kernel's code runs no more, and the next
// launch works. Without a stop, the check is only polled.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "opkit/interrupt.hpp"
#include "opkit/opkit.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Every loop has a side effect (the counter), so the compiler may not assume it ends.
const char* kEndlessKernels = R"cuda(
__global__ void spin(unsigned long long* progress) {
  for (;;) atomicAdd(progress, 1ull);
}
__global__ void spin_at_barriers(unsigned long long* progress) {
  for (;;) {
    atomicAdd(progress, 1ull);
    __syncthreads();
  }
}
// Most of its time inside printf, which holds stdout's lock: a stop must not leave it there.
__global__ void spin_in_printf(unsigned long long* progress) {
  for (;;) {
    atomicAdd(progress, 1ull);
    printf("%s", "");
  }
}
// Ends only once the caller writes *released: a launch that returns has polled the check.
__global__ void wait_for_release(volatile unsigned int* released, unsigned long long* out) {
  while (*released == 0) {
  }
  atomicAdd(out, 1ull);
}
__global__ void fill_ones(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1; }
)cuda";

const opkit::Module& kernels() {
  static const opkit::Module module = opkit::Device::cpu().compile(opkit::Program(kEndlessKernels).name("endless.cu"));
  return module;
}

// A check that asks to stop once `after` has passed since it was made, counting its calls.
struct StopAfter {
  explicit StopAfter(std::chrono::milliseconds after) : deadline(Clock::now() + after) {}
  Clock::time_point deadline;
  std::atomic<int> calls{0};
  opkit::InterruptCheck check{[this] {
    ++calls;
    return Clock::now() >= deadline;
  }};
};

// Launches an endless kernel on more blocks than there are workers, stops it after 300 ms, and
// checks the error, how soon it came, and that no worker runs the kernel afterwards.
void expect_stopped(const char* kernel, opkit::Dim3 block) {
  auto progress = opkit::Device::cpu().alloc<unsigned long long>(1);
  progress.fill(0);
  const opkit::Kernel endless = kernels().kernel(kernel);  // compiled before the clock starts
  const Clock::time_point start = Clock::now();
  try {
    StopAfter stop(std::chrono::milliseconds(300));
    endless.launch({.grid = 64, .block = block}, progress);
    FAIL() << "an endless kernel returned";
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::interrupted) << e.what();
    EXPECT_EQ(e.kernel(), kernel);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_LT(seconds, 3.0) << "the stop took " << seconds << " s";
  const unsigned long long after_stop = progress.to_host()[0];
  EXPECT_GT(after_stop, 0u) << "the kernel never ran";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(progress.to_host()[0], after_stop) << "the kernel still runs after the launch was stopped";

  // Every worker is free again: a launch over all of them completes.
  auto out = opkit::Device::cpu().alloc<int>(64 * 32);
  out.fill(0);
  kernels().kernel("fill_ones").launch({.grid = 64, .block = 32}, out);
  for (int v : out.to_host()) ASSERT_EQ(v, 1);
}

TEST(CpuBackendInterrupt, AKernelThatNeverReachesABarrierIsStopped) {
  expect_stopped("spin", 32);
}

TEST(CpuBackendInterrupt, AKernelLoopingOverBarriersIsStopped) {
  expect_stopped("spin_at_barriers", 64);
}

TEST(CpuBackendInterrupt, AKernelInsideALibraryCallIsStoppedOutsideItAndLeavesNoLockHeld) {
  expect_stopped("spin_in_printf", 4);
  // stdout's lock is free: were a worker left inside printf, this would wait forever.
  std::printf("%s", "");
  EXPECT_EQ(std::fflush(stdout), 0);
}

TEST(CpuBackendInterrupt, AStoppedLaunchCanBeStoppedAgain) {
  expect_stopped("spin", 1);
  expect_stopped("spin", 1);
}

TEST(CpuBackendInterrupt, WithoutAStopTheCheckIsPolledAndTheLaunchCompletes) {
  auto released = opkit::Device::cpu().alloc<unsigned int>(1);
  auto out = opkit::Device::cpu().alloc<unsigned long long>(1);
  released.fill(0);
  out.fill(0);
  // The kernel waits for the check itself, so the test does not depend on how fast this machine
  // is: the launch can only complete after its wait has asked the check at least once. (CPU
  // device memory is host memory, so the check can write the flag the kernel reads.)
  std::atomic<int> calls{0};
  std::atomic_ref<unsigned int> flag(*released.data());
  opkit::InterruptCheck release_on_first_poll([&] {
    ++calls;
    flag.store(1);
    return false;
  });
  kernels().kernel("wait_for_release").launch({.grid = 8, .block = 4}, released, out);
  EXPECT_EQ(out.to_host()[0], 8u * 4u);
  EXPECT_GT(calls.load(), 0);
}

TEST(InterruptCheck, TheInnermostCheckIsAskedAndAThrowingCheckMeansStop) {
  EXPECT_FALSE(opkit::interrupt_check_installed());
  EXPECT_FALSE(opkit::interrupt_requested());
  {
    opkit::InterruptCheck outer([] { return true; });
    EXPECT_TRUE(opkit::interrupt_requested());
    {
      opkit::InterruptCheck inner([] { return false; });
      EXPECT_FALSE(opkit::interrupt_requested());
    }
    EXPECT_TRUE(opkit::interrupt_requested());
    opkit::InterruptCheck throwing([]() -> bool { throw std::runtime_error("no answer"); });
    EXPECT_TRUE(opkit::interrupt_requested());
  }
  EXPECT_FALSE(opkit::interrupt_check_installed());
  // Checks are per thread: another thread sees none.
  opkit::InterruptCheck here([] { return true; });
  bool elsewhere = true;
  std::thread([&] { elsewhere = opkit::interrupt_check_installed(); }).join();
  EXPECT_FALSE(elsewhere);
}

}  // namespace
