// The logic of `mpirun opkit mine` that needs no MPI: where each rank's chunk of a round lies,
// what the reports of a round mean (the lowest find wins only when everything below it was
// searched), how chunk sizes follow the measured rate, and which devices and cores a rank takes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <vector>

#include "mpi/mine_rounds.hpp"
#include "opkit/error.hpp"
#include "opkit/mpi.hpp"

namespace {

using opkit::mpi::World;
using opkit::mpi::detail::chunk_of;
using opkit::mpi::detail::combine;
using opkit::mpi::detail::next_chunk_size;
using opkit::mpi::detail::Position;
using opkit::mpi::detail::RoundOutcome;
using opkit::mpi::detail::RoundReport;
using State = RoundOutcome::State;

constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

RoundReport complete(std::uint64_t count) {
  RoundReport r;
  r.count = count;
  r.tested = count;
  r.hashes = count;
  return r;
}

RoundReport found_at(std::uint64_t first, std::uint64_t count, std::uint64_t nonce) {
  RoundReport r;
  r.count = count;
  r.found = nonce;
  r.tested = nonce - first + 1;
  return r;
}

TEST(MpiRounds, RanksTakeConsecutiveChunksInRankOrder) {
  const std::vector<std::uint64_t> sizes{100, 50, 200};
  EXPECT_EQ(chunk_of(1000, sizes, 0, 1'000'000).first, 1000u);
  EXPECT_EQ(chunk_of(1000, sizes, 0, 1'000'000).count, 100u);
  EXPECT_EQ(chunk_of(1000, sizes, 1, 1'000'000).first, 1100u);
  EXPECT_EQ(chunk_of(1000, sizes, 1, 1'000'000).count, 50u);
  EXPECT_EQ(chunk_of(1000, sizes, 2, 1'000'000).first, 1150u);
  EXPECT_EQ(chunk_of(1000, sizes, 2, 1'000'000).count, 200u);
}

TEST(MpiRounds, ChunksStopAtTheRangeEnd) {
  const std::vector<std::uint64_t> sizes{100, 100, 100};
  EXPECT_EQ(chunk_of(0, sizes, 1, 150).first, 100u);
  EXPECT_EQ(chunk_of(0, sizes, 1, 150).count, 50u);
  EXPECT_EQ(chunk_of(0, sizes, 2, 150).count, 0u);
}

TEST(MpiRounds, ChunksReachTheLastSixtyFourBitNonce) {
  const Position end = Position{u64_max} + 1;
  const std::vector<std::uint64_t> sizes{u64_max, u64_max};
  const auto first = chunk_of(u64_max - 9, sizes, 0, end);
  EXPECT_EQ(first.first, u64_max - 9);
  EXPECT_EQ(first.count, 10u);
  EXPECT_EQ(chunk_of(u64_max - 9, sizes, 1, end).count, 0u);
}

TEST(MpiRounds, ReportsSurviveTheirWordForm) {
  RoundReport r = found_at(10, 100, 42);
  r.stop = true;
  r.hashes = 77;
  r.next_size = 1u << 30;
  r.elapsed_us = 123456;
  const auto words = r.words();
  const RoundReport back = RoundReport::from_words(words);
  EXPECT_EQ(back.count, 100u);
  EXPECT_EQ(back.tested, 33u);
  ASSERT_TRUE(back.found);
  EXPECT_EQ(*back.found, 42u);
  EXPECT_TRUE(back.stop);
  EXPECT_EQ(back.hashes, 77u);
  EXPECT_EQ(back.next_size, 1u << 30);
  EXPECT_EQ(back.elapsed_us, 123456u);
  EXPECT_FALSE(RoundReport::from_words(complete(5).words()).found);
}

TEST(MpiRounds, CompleteChunksMoveTheSearchOn) {
  const std::vector<RoundReport> reports{complete(100), complete(50), complete(200)};
  const RoundOutcome o = combine(1000, reports, 1'000'000);
  EXPECT_EQ(o.state, State::go_on);
  EXPECT_EQ(o.searched_end, Position{1350});
}

TEST(MpiRounds, TheLowestRankWithAFindGivesTheAnswer) {
  // Ranks 1 and 2 both found; rank 1's chunk lies lower, and rank 0's was complete.
  const std::vector<RoundReport> reports{complete(100), found_at(100, 100, 180), found_at(200, 100, 201)};
  const RoundOutcome o = combine(0, reports, 1'000'000);
  EXPECT_EQ(o.state, State::found);
  EXPECT_EQ(o.nonce, 180u);
  EXPECT_EQ(o.searched_end, Position{181});
}

TEST(MpiRounds, AFindAboveAStoppedChunkIsNotCertain) {
  RoundReport stopped = complete(100);
  stopped.tested = 40;
  stopped.stop = true;
  const std::vector<RoundReport> reports{stopped, found_at(100, 100, 150)};
  const RoundOutcome o = combine(500, reports, 1'000'000);
  EXPECT_EQ(o.state, State::stopped);
  EXPECT_EQ(o.searched_end, Position{540});
}

TEST(MpiRounds, AStopAfterCompleteChunksEndsAtTheRoundEnd) {
  RoundReport late = complete(100);
  late.stop = true;
  const std::vector<RoundReport> reports{complete(100), late};
  const RoundOutcome o = combine(0, reports, 1'000'000);
  EXPECT_EQ(o.state, State::stopped);
  EXPECT_EQ(o.searched_end, Position{200});
}

TEST(MpiRounds, TheRangeEndsWithoutAFind) {
  const std::vector<RoundReport> reports{complete(100), complete(20), RoundReport{}};
  const RoundOutcome o = combine(0, reports, 120);
  EXPECT_EQ(o.state, State::exhausted);
  EXPECT_EQ(o.searched_end, Position{120});
}

TEST(MpiRounds, ChunkSizesFollowTheMeasuredRate) {
  // 1e6 nonces in 0.1 s: 1e7/s, so 0.5 s rounds take 5e6.
  EXPECT_EQ(next_chunk_size(1'000'000, 1'000'000, 0.1, 0.5, 1000), 5'000'000u);
}

TEST(MpiRounds, ChunkSizesGrowAtMostSixteenfold) {
  EXPECT_EQ(next_chunk_size(1000, 1000, 1e-6, 0.5, 10), 16'000u);
}

TEST(MpiRounds, ChunkSizesNeverFallUnderWhatTheEnginesAskFor) {
  // A first round slowed by compiling measures a low rate.
  EXPECT_EQ(next_chunk_size(65536, 65536, 2.0, 0.5, 65536), 65536u);
  EXPECT_EQ(next_chunk_size(0, 0, 0, 0.5, 4096), 4096u);
}

TEST(MpiRounds, ChunkSizesStayFarFromOverflow) {
  EXPECT_EQ(next_chunk_size(u64_max / 2, u64_max / 2, 1e-9, 60, u64_max), std::uint64_t{1} << 63);
}

World node(int local_rank, int local_size) {
  World w;
  w.local_rank = local_rank;
  w.local_size = local_size;
  return w;
}

TEST(MpiNodeShare, RanksSplitTheNodesDevices) {
  EXPECT_EQ(opkit::mpi::node_share(4, node(0, 2)), (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(opkit::mpi::node_share(4, node(1, 2)), (std::vector<std::size_t>{1, 3}));
  EXPECT_EQ(opkit::mpi::node_share(8, node(5, 8)), (std::vector<std::size_t>{5}));
  EXPECT_EQ(opkit::mpi::node_share(3, node(0, 1)), (std::vector<std::size_t>{0, 1, 2}));
}

TEST(MpiNodeShare, MoreRanksThanDevicesTakeTurns) {
  // One visible GPU per rank (CUDA_VISIBLE_DEVICES set per rank): every rank takes it.
  for (int r = 0; r < 4; ++r) EXPECT_EQ(opkit::mpi::node_share(1, node(r, 4)), (std::vector<std::size_t>{0}));
  EXPECT_EQ(opkit::mpi::node_share(2, node(1, 3)), (std::vector<std::size_t>{1}));
  EXPECT_EQ(opkit::mpi::node_share(2, node(2, 3)), (std::vector<std::size_t>{0}));
  EXPECT_TRUE(opkit::mpi::node_share(0, node(1, 3)).empty());
}

TEST(MpiNodeShare, BadLocalRankIsRejected) {
  EXPECT_THROW(opkit::mpi::node_share(4, node(2, 2)), opkit::Error);
  EXPECT_THROW(opkit::mpi::node_share(4, node(0, 0)), opkit::Error);
}

TEST(MpiNodeShare, RanksSplitTheNodesCores) {
  EXPECT_EQ(opkit::mpi::node_share_of_cores(16, node(0, 4)), 4);
  EXPECT_EQ(opkit::mpi::node_share_of_cores(2, node(2, 3)), 1);
  EXPECT_EQ(opkit::mpi::node_share_of_cores(16, node(0, 1)), 16);
}

TEST(MpiLauncher, PlainRunsAreNotUnderMpi) {
  // The test runner is not started by mpirun (the CLI tests cover the launched case).
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_SIZE"))
    GTEST_SKIP() << "running under an MPI launcher";
  EXPECT_FALSE(opkit::mpi::launched_by_mpi());
}

}  // namespace
