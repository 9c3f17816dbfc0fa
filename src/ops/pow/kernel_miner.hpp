// Mining on a device: the job's kernel (kernel_programs.hpp) in launches sized to about
// `launch_seconds` each, from the rate measured on the previous ones. Kernels compile in the
// background (core/compile_queue.hpp); until the right one is ready, the tuning says what runs
// meanwhile.
#pragma once

#include <memory>

#include "kernel_programs.hpp"
#include "mine_plan.hpp"
#include "nonce_searcher.hpp"
#include "opkit/device.hpp"

namespace opkit::ops::detail {

// host_threads: cores the host miner may use while a data-mode kernel compiles (<= 0: all).
std::unique_ptr<NonceSearcher> make_kernel_searcher(const MinePlan& plan, Device device, double launch_seconds,
                                                    const PowKernelTuning& tuning = {}, int host_threads = 0);

}  // namespace opkit::ops::detail
