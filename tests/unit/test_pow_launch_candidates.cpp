// The host's reading of a launch's candidate buffer and its verdict: every candidate checked in
// increasing order when the buffer holds them all; after an overflow, the lowest candidate first,
// and only the nonces the buffer cannot vouch for left to search again.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "ops/pow/launch_candidates.hpp"

namespace {

using opkit::ops::detail::check_candidates;
using opkit::ops::detail::empty_candidates;
using opkit::ops::detail::LaunchCandidates;
using opkit::ops::detail::no_candidate;

constexpr std::uint64_t at = 1000;
constexpr std::uint64_t n = 500;

// `meets` for the nonces in `qualifying`, recording every nonce asked about.
struct Checker {
  std::set<std::uint64_t> qualifying;
  std::vector<std::uint64_t> asked;
  bool operator()(std::uint64_t nonce) {
    asked.push_back(nonce);
    return qualifying.count(nonce) > 0;
  }
};

// A buffer as the kernels leave it: `reported` candidates arrived in this order, `slots` kept.
std::vector<std::uint32_t> buffer(const std::vector<std::uint32_t>& reported, std::uint32_t slots) {
  std::vector<std::uint32_t> words = empty_candidates(slots);
  for (std::uint32_t offset : reported) {
    if (words[0] < slots) words[2 + words[0]] = offset;
    ++words[0];
    words[1] = std::min(words[1], offset);
  }
  return words;
}

TEST(PowLaunchCandidates, AnEmptyBufferHasNoCandidateAndNothingUnresolved) {
  const LaunchCandidates c = LaunchCandidates::read(empty_candidates(8));
  EXPECT_EQ(c.count, 0u);
  EXPECT_EQ(c.lowest, no_candidate);
  EXPECT_TRUE(c.complete());
  Checker checker;
  const auto verdict = check_candidates(c, at, n, std::ref(checker));
  EXPECT_FALSE(verdict.found);
  EXPECT_FALSE(verdict.unresolved);
  EXPECT_TRUE(checker.asked.empty());
}

TEST(PowLaunchCandidates, AFullBufferIsCheckedInIncreasingOrderUpToTheFirstThatQualifies) {
  const LaunchCandidates c = LaunchCandidates::read(buffer({300, 7, 120, 42}, 8));
  EXPECT_TRUE(c.complete());
  EXPECT_EQ(c.offsets, (std::vector<std::uint32_t>{7, 42, 120, 300}));
  Checker checker{{at + 120, at + 300}, {}};
  const auto verdict = check_candidates(c, at, n, std::ref(checker));
  EXPECT_EQ(verdict.found, at + 120);
  EXPECT_FALSE(verdict.unresolved);
  EXPECT_EQ(checker.asked, (std::vector<std::uint64_t>{at + 7, at + 42, at + 120}));
}

TEST(PowLaunchCandidates, AFullBufferOfFalseCandidatesLeavesTheLaunchDone) {
  Checker checker;
  const auto verdict = check_candidates(LaunchCandidates::read(buffer({9, 3}, 2)), at, n, std::ref(checker));
  EXPECT_FALSE(verdict.found);
  EXPECT_FALSE(verdict.unresolved);
  EXPECT_EQ(checker.asked.size(), 2u);
}

TEST(PowLaunchCandidates, AfterAnOverflowAQualifyingLowestCandidateIsTheAnswer) {
  const LaunchCandidates c = LaunchCandidates::read(buffer({50, 60, 70, 5, 80}, 3));
  EXPECT_FALSE(c.complete());
  EXPECT_EQ(c.lowest, 5u);
  Checker checker{{at + 5, at + 60}, {}};
  const auto verdict = check_candidates(c, at, n, std::ref(checker));
  EXPECT_EQ(verdict.found, at + 5);
  EXPECT_FALSE(verdict.unresolved);
  EXPECT_EQ(checker.asked, (std::vector<std::uint64_t>{at + 5}));
}

TEST(PowLaunchCandidates, AfterAnOverflowOnlyTheRangeBelowTheFirstStoredHitIsUnresolved) {
  // Stored: 50, 60, 70; the lowest (5) arrived after the slots were full, so candidates between
  // 5 and 60 may be missing from the buffer.
  Checker checker{{at + 60}, {}};
  const auto verdict =
      check_candidates(LaunchCandidates::read(buffer({50, 60, 70, 5, 80}, 3)), at, n, std::ref(checker));
  EXPECT_EQ(verdict.found, at + 60);
  ASSERT_TRUE(verdict.unresolved);
  EXPECT_EQ(*verdict.unresolved, std::pair(at + 6, at + 60));
}

TEST(PowLaunchCandidates, AfterAnOverflowWithNoStoredHitTheRestOfTheLaunchIsUnresolved) {
  Checker checker;
  const auto verdict = check_candidates(LaunchCandidates::read(buffer({50, 60, 70, 5}, 3)), at, n, std::ref(checker));
  EXPECT_FALSE(verdict.found);
  ASSERT_TRUE(verdict.unresolved);
  EXPECT_EQ(*verdict.unresolved, std::pair(at + 6, at + n));
}

}  // namespace
