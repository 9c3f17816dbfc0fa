// The host side of a mining launch's candidate buffer (pow_report in kernels/pow_sha256.cuh):
// reading it back, and what the full 256-bit check of its candidates says about the launch.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace opkit::ops::detail {

// The buffer's layout: [count, lowest, slots...].
constexpr std::uint32_t candidate_header_words = 2;
constexpr std::uint32_t no_candidate = 0xffffffffu;

// The words a launch's buffer starts as: no candidate yet.
std::vector<std::uint32_t> empty_candidates(std::uint32_t slots);

struct LaunchCandidates {
  std::uint32_t count = 0;              // offsets that passed the quick test
  std::uint32_t lowest = no_candidate;  // the lowest of them
  std::vector<std::uint32_t> offsets;   // all of them when count <= slots, else `slots` of them

  // From the words read back after the launch.
  static LaunchCandidates read(const std::vector<std::uint32_t>& words);
  bool complete() const { return count <= offsets.size(); }
};

struct CandidateVerdict {
  // The lowest nonce of the launch known to qualify; with `unresolved`, only once that range
  // holds none.
  std::optional<std::uint64_t> found;
  // [first, end): nonces the buffer cannot vouch for, because it overflowed (more candidates than
  // slots). Empty when the verdict is final.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> unresolved;
};

// Checks the candidates of a launch over [at, at + n) in increasing order with `meets` (the full
// check of one nonce). With every candidate in the buffer the verdict is final. After an
// overflow, a qualifying lowest candidate is still the answer; otherwise what lies between it
// and the lowest stored candidate that qualifies (or the launch's end) is unresolved.
CandidateVerdict check_candidates(const LaunchCandidates& candidates, std::uint64_t at, std::uint64_t n,
                                  const std::function<bool(std::uint64_t)>& meets);

}  // namespace opkit::ops::detail
