// A mining job on one GPU with one kernel choice only (no host or generic stand-in), through the
// same range search as the library: what the PowGpu tests compare with the references.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "opkit/ops/pow.hpp"
#include "ops/pow/kernel_miner.hpp"
#include "ops/pow/mine_plan.hpp"
#include "ops/pow/range_search.hpp"

namespace opkit::test {

template <class Job>
ops::MineResult on_gpu(const Device& gpu, const Job& job, ops::detail::PowKernelChoice choice,
                       double launch_seconds = 0.1) {
  const ops::detail::MinePlan plan = ops::detail::make_plan(job);
  ops::detail::PowKernelTuning tuning;
  tuning.kernel = choice;
  std::vector<std::unique_ptr<ops::detail::NonceSearcher>> engines;
  engines.push_back(ops::detail::make_kernel_searcher(plan, gpu, launch_seconds, tuning));
  ops::MineOptions options;
  options.launch_seconds = launch_seconds;
  return ops::detail::search_range(plan, std::move(engines), options);
}

}  // namespace opkit::test
