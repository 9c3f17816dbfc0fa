// Mining on a device: the job's kernel (kernel_programs.hpp says which) in launches sized to about
// `launch_seconds` each, from the rate measured on the previous ones. Kernels that compile beside
// the search (data mode) run on the compile queue (core/compile_queue.hpp) and are owned by the
// searcher: its destruction drops those not started and waits for a running one, so none is
// left running once the search returns.
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
