// The round layout of a distributed search (see mine_rounds.hpp).
#include "mine_rounds.hpp"

#include <algorithm>

namespace opkit::mpi::detail {

RoundChunk chunk_of(Position base, std::span<const std::uint64_t> sizes, int rank, Position end) {
  Position first = base;
  for (int q = 0; q < rank; ++q) first += sizes[static_cast<std::size_t>(q)];
  if (first >= end) return {};
  const Position stop = std::min(end, first + sizes[static_cast<std::size_t>(rank)]);
  return {static_cast<std::uint64_t>(first), static_cast<std::uint64_t>(stop - first)};
}

std::array<std::uint64_t, RoundReport::word_count> RoundReport::words() const {
  const std::uint64_t flags = (found ? 1u : 0u) | (stop ? 2u : 0u);
  return {count, tested, found.value_or(0), flags, hashes, next_size, elapsed_us, 0};
}

RoundReport RoundReport::from_words(std::span<const std::uint64_t, word_count> w) {
  RoundReport r;
  r.count = w[0];
  r.tested = w[1];
  if (w[3] & 1u) r.found = w[2];
  r.stop = (w[3] & 2u) != 0;
  r.hashes = w[4];
  r.next_size = w[5];
  r.elapsed_us = w[6];
  return r;
}

RoundOutcome combine(Position base, std::span<const RoundReport> reports, Position end) {
  RoundOutcome outcome;
  Position at = base;
  bool stop = false;
  for (const RoundReport& r : reports) {
    stop = stop || r.stop;
    // Chunks are consecutive, so a find here is the lowest: every chunk before it was complete.
    if (r.found) {
      outcome.state = RoundOutcome::State::found;
      outcome.nonce = *r.found;
      outcome.searched_end = Position{*r.found} + 1;
      return outcome;
    }
    at += r.tested;
    if (r.tested < r.count) {  // stopped inside its chunk: what lies above is not certain
      outcome.state = RoundOutcome::State::stopped;
      outcome.searched_end = at;
      return outcome;
    }
  }
  outcome.searched_end = at;
  if (at >= end)
    outcome.state = RoundOutcome::State::exhausted;
  else if (stop)
    outcome.state = RoundOutcome::State::stopped;
  return outcome;
}

std::uint64_t next_chunk_size(std::uint64_t count, std::uint64_t hashes, double seconds, double round_seconds,
                              std::uint64_t engine_sizes) {
  constexpr double cap = 9223372036854775808.0;  // 2^63: converts to 64 bits exactly
  double size = static_cast<double>(std::max<std::uint64_t>(engine_sizes, 1));
  if (count > 0 && hashes > 0 && seconds > 0) {
    const double measured = static_cast<double>(hashes) / seconds * round_seconds;
    size = std::max(size, std::min(measured, 16.0 * static_cast<double>(count)));
  }
  return static_cast<std::uint64_t>(std::min(size, cap));
}

}  // namespace opkit::mpi::detail
