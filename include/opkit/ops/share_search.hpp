// Every share of a header, not just the lowest: mine() answers the lowest qualifying nonce of a
// range, so a pool miner searches on from one past each share it finds until the range ends.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "opkit/ops/pow.hpp"

namespace opkit::ops {

struct ShareSearchResult {
  std::uint64_t shares = 0;
  std::uint64_t hashes = 0;  // nonces tested, over all the mine() calls
  double seconds = 0;
  bool interrupted = false;  // MineOptions::stop ended it before the range's last nonce
  // Every nonce of [range.first, searched_through] was tested; empty when none was.
  std::optional<std::uint64_t> searched_through;
  std::vector<std::string> engines;
};

// Calls on_share(nonce, digest) for each nonce of `range` whose hash meets `target`, in
// increasing order, on the calling thread. `options` is mine()'s (devices, stop flag, progress;
// progress reports hashes over the whole range). Throws what mine() throws.
ShareSearchResult search_shares(const BlockHeader& header, const Target& target, const NonceRange& range,
                                const MineOptions& options,
                                const std::function<void(std::uint32_t nonce, const Sha256Digest& digest)>& on_share);

}  // namespace opkit::ops
