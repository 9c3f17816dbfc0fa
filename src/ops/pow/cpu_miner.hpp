// The native CPU miner: every core (OpenMP) runs the host SHA-256 (SHA-NI where the CPU has it),
// starting from the plan's midstate.
#pragma once

#include <memory>

#include "mine_plan.hpp"
#include "nonce_searcher.hpp"

namespace opkit::ops::detail {

// threads <= 0: all cores.
std::unique_ptr<NonceSearcher> make_cpu_searcher(const MinePlan& plan, int threads);

// One chunk [first, last] on `threads` cores (<= 0: all): its lowest qualifying nonce, if any.
ChunkOutcome scan_on_host(const MinePlan& plan, std::uint64_t first, std::uint64_t last, int threads);

}  // namespace opkit::ops::detail
