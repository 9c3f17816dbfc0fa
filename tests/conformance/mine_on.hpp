// How a conformance target mines: on a device with one kernel choice only (through the same range
// search as the library, with no host or generic stand-in) or through the public API's adaptive
// choice; on host with the native CPU miner (SHA-NI where present).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "conformance/devices.hpp"
#include "opkit/ops/pow.hpp"
#include "ops/pow/kernel_miner.hpp"
#include "ops/pow/mine_plan.hpp"
#include "ops/pow/range_search.hpp"

namespace opkit::test {

enum class MineEngine {
  generic,      // the kernel compiled once for every job
  specialised,  // the kernel compiled for the job
  adaptive,     // opkit::ops::mine on the device: what is ready, as the library chooses
  native,       // opkit::ops::mine on the host CPU (host's only engine)
};

inline const char* engine_name(MineEngine engine) {
  switch (engine) {
    case MineEngine::generic:
      return "generic kernel";
    case MineEngine::specialised:
      return "specialised kernel";
    case MineEngine::adaptive:
      return "adaptive";
    case MineEngine::native:
      return "native";
  }
  return "?";
}

// Every engine the target has, the specialised kernel before the adaptive choice (which then
// finds it compiled).
inline std::vector<MineEngine> engines_of(const Target& target) {
  if (target.is_host()) return {MineEngine::native};
  return {MineEngine::generic, MineEngine::specialised, MineEngine::adaptive};
}

// `options.devices` and `options.cpu` are set from the target and the engine. `tuning` sets a
// device engine's test knobs (the quick test's threshold, the candidate slots); its kernel choice
// comes from `engine`. The adaptive engine runs through opkit::ops::mine unless a knob is set.
template <class Job>
ops::MineResult mine_on(const Target& target, MineEngine engine, const Job& job, ops::MineOptions options = {},
                        ops::detail::PowKernelTuning tuning = {}) {
  const bool knobs =
      tuning.quick_test_top.has_value() || tuning.candidate_slots != ops::detail::PowKernelTuning{}.candidate_slots;
  if (engine == MineEngine::native || (engine == MineEngine::adaptive && !knobs)) {
    options.devices.clear();
    if (engine == MineEngine::adaptive) options.devices.push_back(*target.device);
    options.cpu = engine == MineEngine::native;
    return ops::mine(job, options);
  }
  const ops::detail::MinePlan plan = ops::detail::make_plan(job);
  tuning.kernel = engine == MineEngine::generic       ? ops::detail::PowKernelChoice::generic
                  : engine == MineEngine::specialised ? ops::detail::PowKernelChoice::specialised
                                                      : ops::detail::PowKernelChoice::adaptive;
  std::vector<std::unique_ptr<ops::detail::NonceSearcher>> engines;
  engines.push_back(ops::detail::make_kernel_searcher(plan, *target.device, options.launch_seconds, tuning));
  return ops::detail::search_range(plan, std::move(engines), options);
}

}  // namespace opkit::test
