// Splits a nonce range over several engines (GPUs, CPU), each taking chunks of about one launch
// as it becomes free, so faster engines take more. The answer is the lowest qualifying nonce:
// chunks are handed out in increasing order, and once a nonce is found, chunks above it are
// skipped or abandoned while those below it run to the end.
#pragma once

#include <memory>
#include <vector>

#include "mine_plan.hpp"
#include "nonce_searcher.hpp"
#include "opkit/ops/pow.hpp"

namespace opkit::ops::detail {

// Runs the search on one thread per engine; progress callbacks run on the calling thread. An
// engine's error stops the others and is rethrown here.
MineResult search_range(const MinePlan& plan, std::vector<std::unique_ptr<NonceSearcher>> engines,
                        const MineOptions& options);

}  // namespace opkit::ops::detail
