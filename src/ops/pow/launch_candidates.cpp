// Reading and checking a launch's candidates (see launch_candidates.hpp).
#include "launch_candidates.hpp"

#include <algorithm>

namespace opkit::ops::detail {

std::vector<std::uint32_t> empty_candidates(std::uint32_t slots) {
  std::vector<std::uint32_t> words(candidate_header_words + slots, no_candidate);
  words[0] = 0;
  return words;
}

LaunchCandidates LaunchCandidates::read(const std::vector<std::uint32_t>& words) {
  LaunchCandidates c;
  c.count = words.at(0);
  c.lowest = words.at(1);
  const std::size_t slots = words.size() - candidate_header_words;
  const std::size_t stored = std::min<std::size_t>(c.count, slots);
  c.offsets.assign(words.begin() + candidate_header_words, words.begin() + candidate_header_words + stored);
  std::sort(c.offsets.begin(), c.offsets.end());
  return c;
}

CandidateVerdict check_candidates(const LaunchCandidates& candidates, std::uint64_t at, std::uint64_t n,
                                  const std::function<bool(std::uint64_t)>& meets) {
  CandidateVerdict verdict;
  if (candidates.count == 0) return verdict;
  if (!candidates.complete() && meets(at + candidates.lowest)) {
    verdict.found = at + candidates.lowest;
    return verdict;
  }
  for (const std::uint32_t offset : candidates.offsets) {
    if (!candidates.complete() && offset == candidates.lowest) continue;  // checked above
    if (meets(at + offset)) {
      verdict.found = at + offset;
      break;
    }
  }
  if (candidates.complete()) return verdict;
  // Candidates between the lowest and the first stored one that qualifies may be missing.
  const std::uint64_t first = at + candidates.lowest + 1;
  const std::uint64_t end = verdict.found ? *verdict.found : at + n;
  if (first < end) verdict.unresolved = std::pair{first, end};
  return verdict;
}

}  // namespace opkit::ops::detail
