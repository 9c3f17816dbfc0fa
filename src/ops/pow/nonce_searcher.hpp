// One engine that tests nonces: the native CPU miner, or a device running the mining kernel.
// The range search (range_search.hpp) hands each engine chunks of the range.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace opkit::ops::detail {

struct ChunkOutcome {
  std::optional<std::uint64_t> found;  // the lowest qualifying nonce of the chunk (host-checked)
  // Nonces [first, first + tested) were all tested: the whole chunk, up to `found`, or the part
  // done before keep_going() said stop.
  std::uint64_t tested = 0;
  // Nonces hashed a second time, beyond the ones counted in `hashes`: a device launch whose
  // candidates overflowed its buffer is searched again in part (kernel_miner.cpp).
  std::uint64_t rehashed = 0;
};

class NonceSearcher {
 public:
  virtual ~NonceSearcher() = default;
  virtual std::string name() const = 0;
  // How many nonces to hand out next so that a chunk takes about `seconds`.
  virtual std::uint64_t chunk_size(double seconds) = 0;
  // Searches [first, last] in steps (launches) of at most about `seconds`, adding each step's
  // nonces to `hashes` once (each nonce searched counts once), and asks keep_going() between steps.
  virtual ChunkOutcome search(std::uint64_t first, std::uint64_t last, const std::function<bool()>& keep_going,
                              std::atomic<std::uint64_t>& hashes) = 0;
};

}  // namespace opkit::ops::detail
