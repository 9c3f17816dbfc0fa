// A process that returns from main while an NVRTC compile runs on the compile queue must exit
// cleanly (status 0): the queue's destructor waits for the compile, and NVRTC's static state must
// still be alive then (issue 20: the GPU machine crashed in nvrtcCompileProgram at exit; without
// NVRTC's warm-up this machine hangs or aborts with "LLVM ERROR: out of memory"). The test is the
// exit itself: CTest fails it on a signal, a non-zero status or its timeout. Needs NVRTC, not a
// GPU; exits 77 (skipped) without it.
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>

#include "core/compile_queue.hpp"
#include "opkit/nvrtc.hpp"
#include "opkit/target.hpp"
#include "ops/pow/kernel_programs.hpp"
#include "ops/pow/mine_plan.hpp"

int main() {
  namespace ops = opkit::ops;
  if (!opkit::nvrtc::info().available) {
    std::printf("skipped: NVRTC not available\n");
    return 77;
  }
  // A job never compiled before, so that neither cache answers: NVRTC compiles for a second or more.
  const ops::DataJob job{"exit " + std::to_string(std::random_device{}()) + std::to_string(std::random_device{}()), 40,
                         0, std::nullopt};
  static const ops::detail::MinePlan plan = ops::detail::make_plan(job);
  auto& queue = opkit::detail::CompileQueue::global();
  // Deliberately never cancelled or waited for: the case the queue's owners must not leave behind.
  static const auto compile = queue.submit([] {
    return opkit::compile(ops::detail::data_program(plan, 12, {}), opkit::Target::cuda("sm_90")).binary.size();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (queue.active_jobs() != 1 || compile.ready()) {
    std::printf("the compile ended before exit: the case was not exercised\n");
    return 1;
  }
  std::printf("returning from main while the compile runs\n");
  std::fflush(stdout);
  return 0;
}
