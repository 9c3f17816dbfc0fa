// The round layout of a mining range spread over ranks, without MPI: where each rank's chunk of a
// round lies, what a rank reports after it, and what the reports of all ranks mean together.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace opkit::mpi::detail {

// Range positions can be 2^64 (one past the data scheme's last nonce).
__extension__ typedef unsigned __int128 Position;

// A rank's chunk in one round: [first, first + count); count 0 when the range ended before it.
struct RoundChunk {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
};

// Rank r's chunk of the round that starts at `base`: the ranks take consecutive chunks of
// sizes[0], sizes[1], ... in rank order, cut at `end` (one past the range's last nonce).
RoundChunk chunk_of(Position base, std::span<const std::uint64_t> sizes, int rank, Position end);

// What one rank reports after a round; travels as words() through one MPI_Allgather.
struct RoundReport {
  std::uint64_t count = 0;             // nonces in its chunk
  std::uint64_t tested = 0;            // [first, first + tested) were all tested (through `found` if found)
  std::optional<std::uint64_t> found;  // the lowest qualifying nonce of the chunk
  bool stop = false;                   // this rank was asked to stop
  std::uint64_t hashes = 0;            // nonces tested this round (chunks run whole, so may pass `found`)
  std::uint64_t next_size = 0;         // its chunk size for the next round
  std::uint64_t elapsed_us = 0;        // since the search started on this rank

  static constexpr int word_count = 8;
  std::array<std::uint64_t, word_count> words() const;
  static RoundReport from_words(std::span<const std::uint64_t, word_count> words);
};

// What the reports of one round, in rank order, mean.
struct RoundOutcome {
  enum class State { go_on, found, exhausted, stopped } state = State::go_on;
  std::uint64_t nonce = 0;  // when found: the lowest qualifying nonce of the whole range so far
  // Every nonce of [range first, searched_end) was tested (when found: through the nonce).
  Position searched_end = 0;
};

// `base` is where the round started; every nonce below it was already tested.
RoundOutcome combine(Position base, std::span<const RoundReport> reports, Position end);

// A rank's chunk size for the next round: about `round_seconds` at the rate it just had (nonces
// over seconds), growing at most 16-fold per round (the first rounds include compiling), and
// never under what its engines ask for (`engine_sizes`).
std::uint64_t next_chunk_size(std::uint64_t count, std::uint64_t hashes, double seconds, double round_seconds,
                              std::uint64_t engine_sizes);

}  // namespace opkit::mpi::detail
