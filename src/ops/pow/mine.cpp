// opkit::ops::mine: validates the job, picks the engines (every GPU the mining kernels run on,
// else the host's own miner), and runs the range search over them.
#include <omp.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "cpu_miner.hpp"
#include "kernel_miner.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/pow.hpp"
#include "range_search.hpp"

namespace opkit::ops {
namespace {

std::vector<std::unique_ptr<detail::NonceSearcher>> engines_for(const detail::MinePlan& plan,
                                                                const MineOptions& options) {
  if (!(options.launch_seconds > 0) || options.launch_seconds > 60)
    throw Error(Errc::invalid_argument, "mine", "launch_seconds must be in (0, 60]");
  if (options.cpu_threads < 0) throw Error(Errc::invalid_argument, "mine", "cpu_threads must be >= 0 (0: all cores)");
  std::vector<std::unique_ptr<detail::NonceSearcher>> engines;
  std::vector<Device> devices = options.devices;
  if (devices.empty() && !options.cpu) devices = mine_support().gpus();
  for (const Device& device : devices) mine_support().require(device);
  // Cores each device may use for host mining while its data-mode kernel compiles.
  const int host_threads = std::max(1, (options.cpu_threads > 0 ? options.cpu_threads : omp_get_max_threads()) /
                                           std::max(1, static_cast<int>(devices.size())));
  engines.reserve(devices.size() + 1);
  for (Device& device : devices)
    engines.push_back(detail::make_kernel_searcher(plan, std::move(device), options.launch_seconds, {}, host_threads));
  if (options.cpu || engines.empty()) engines.push_back(detail::make_cpu_searcher(plan, options.cpu_threads));
  return engines;
}

MineResult run(const detail::MinePlan& plan, const MineOptions& options) {
  return detail::search_range(plan, engines_for(plan, options), options);
}

}  // namespace

MineResult mine(const BitcoinJob& job, const MineOptions& options) {
  return run(detail::make_plan(job), options);
}

MineResult mine(const DataJob& job, const MineOptions& options) {
  return run(detail::make_plan(job), options);
}

}  // namespace opkit::ops
