// Every nonce is hashed once: a launch reports all of its quick-test candidates and the host
// checks each, so false candidates (top 32 bits pass, the whole hash does not) cost no re-hashed
// nonces, and a launch with more candidates than its buffer holds is re-searched only in part,
// never missing the lowest qualifying nonce. Real targets give a false candidate per 2^32
// nonces; the quick test's threshold knob makes them common here, against targets whose top word
// is zero. References: OpenSSL brute force (test_pow_reference.hpp). On every target; a search
// also leaves no compile of its running (the exit crash of issue 20).
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <string>

#include "conformance/devices.hpp"
#include "conformance/mine_on.hpp"
#include "core/compile_queue.hpp"
#include "opkit/ops/pow.hpp"
#include "unit/test_pow_reference.hpp"

namespace {

using namespace opkit::ops;
using opkit::test::brute_force_bitcoin;
using opkit::test::brute_force_data;
using opkit::test::engine_name;
using opkit::test::engines_of;
using opkit::test::mine_on;
using opkit::test::MineEngine;
using Tuning = opkit::ops::detail::PowKernelTuning;

OPKIT_CONFORMANCE_OPERATOR_SUITE(MineCandidates, opkit::ops::mine_support());

// About one nonce in 4096 passes the quick test: a dozen false candidates per 50,000 nonces, well
// under the 64 slots.
Tuning frequent_candidates() {
  Tuning t;
  t.quick_test_top = 0x000fffffu;
  return t;
}

// One nonce in 256 passes, into 4 slots: nearly every launch overflows.
Tuning overflowing_candidates() {
  Tuning t;
  t.quick_test_top = 0x00ffffffu;
  t.candidate_slots = 4;
  return t;
}

struct Case {
  const char* name;
  Tuning tuning;
  bool overflows;
};

std::vector<Case> cases() {
  return {{"frequent candidates", frequent_candidates(), false}, {"overflowing", overflowing_candidates(), true}};
}

// A range that ends at a real block's nonce: its target's top word is zero, the lowest
// qualifying nonce is the brute force's, and the range is searched to its end.
TEST_P(MineCandidates, FalseCandidatesAreCheckedOnceAndTheRangeIsHashedOnce) {
  const auto h = opkit::test::real_headers()[1];
  BitcoinJob job;
  job.header = h.header;
  job.count = 50000;
  job.start = h.nonce - (*job.count - 1);
  ASSERT_EQ(Target::from_compact(h.header.nbits()).top_word(), 0u);
  const auto expected = brute_force_bitcoin(job.header, Target::from_compact(h.header.nbits()), job.start, h.nonce);
  ASSERT_TRUE(expected.has_value());
  for (const Case& c : cases()) {
    for (MineEngine engine : engines_of(target())) {
      SCOPED_TRACE(std::string(engine_name(engine)) + ", " + c.name);
      const MineResult r = mine_on(target(), engine, job, {}, c.tuning);
      ASSERT_TRUE(r.found);
      EXPECT_EQ(r.nonce, *expected);
      EXPECT_EQ(r.hash_hex, h.hash);
      EXPECT_EQ(r.hashes, *job.count) << "a nonce was hashed twice, or one was not hashed";
      // Only an overflowed launch is searched again (the native miner checks every hash in full).
      const bool overflows = c.overflows && engine != MineEngine::native;
      EXPECT_EQ(r.rehashes > 0, overflows) << r.rehashes << " nonces re-hashed";
    }
  }
}

TEST_P(MineCandidates, NotFoundWithFalseCandidatesHashesTheRangeOnce) {
  BitcoinJob job;
  job.header = opkit::test::real_headers()[0].header;
  job.target = Target::from_leading_zero_bits(40);  // top word zero
  job.start = 123456;
  job.count = 40000;
  ASSERT_FALSE(brute_force_bitcoin(job.header, *job.target, job.start, job.start + *job.count - 1).has_value());
  for (const Case& c : cases()) {
    for (MineEngine engine : engines_of(target())) {
      SCOPED_TRACE(std::string(engine_name(engine)) + ", " + c.name);
      // Small launches too: many launches, each with its own candidates.
      MineOptions options;
      options.launch_seconds = 1e-4;
      const MineResult r = mine_on(target(), engine, job, options, c.tuning);
      EXPECT_FALSE(r.found);
      EXPECT_FALSE(r.interrupted);
      EXPECT_EQ(r.searched_through, job.start + *job.count - 1);
      EXPECT_EQ(r.hashes, *job.count);
    }
  }
}

// Data mode: a top word of zero (36 bits, never found here) over a change of digit count, and a
// low difficulty whose lowest hit the brute force gives, with most candidates false.
TEST_P(MineCandidates, DataJobsWithFalseCandidatesHashEachNonceOnce) {
  const DataJob unreachable{"candidates", 36, 98000, 4000};  // 5 and 6 digits
  const DataJob reachable{"candidates", 12, 7000, 20000};    // 4 and 5 digits
  const auto expected = brute_force_data(reachable.data, 12, reachable.start, reachable.start + *reachable.count - 1);
  ASSERT_TRUE(expected.has_value());
  ASSERT_FALSE(brute_force_data(unreachable.data, 36, 98000, 98000 + 3999).has_value());
  for (Case c : cases()) {
    // The 12-bit target's top word is 0x000fffff: a looser threshold still leaves false candidates.
    c.tuning.quick_test_top = 0x0fffffffu;
    for (MineEngine engine : engines_of(target())) {
      SCOPED_TRACE(std::string(engine_name(engine)) + ", " + c.name);
      const MineResult none = mine_on(target(), engine, unreachable, {}, c.tuning);
      EXPECT_FALSE(none.found);
      EXPECT_EQ(none.hashes, 4000u);
      EXPECT_EQ(none.searched_through, std::optional<std::uint64_t>(98000 + 3999));
      const MineResult hit = mine_on(target(), engine, reachable, {}, c.tuning);
      ASSERT_TRUE(hit.found);
      EXPECT_EQ(hit.nonce, *expected);
      EXPECT_EQ(hit.digest, data_hash(reachable.data, hit.nonce));
    }
  }
}

// A stopped search returns only when no compile it started is running: one left running at exit
// crashes in NVRTC's teardown. The specialised data engine compiles the next digit count's kernel
// in the background from its first launch; with the first kernel compiled by an earlier search,
// the stop comes long before that compile can end.
TEST_P(MineCandidates, AStoppedSearchLeavesNoCompileRunning) {
  OPKIT_DEVICE_OR_SKIP(device, "kernel compiles");
  (void)device;
  for (MineEngine engine : engines_of(target())) {
    SCOPED_TRACE(engine_name(engine));
    std::atomic<bool> stop{false};
    MineOptions options;
    options.launch_seconds = 0.02;
    options.stop = &stop;
    options.progress_seconds = 0.02;
    options.progress = [&](const MineProgress& p) {
      if (p.hashes > 0) stop = true;
    };
    // A string never mined before: no kernel of it is in the module or disk cache yet.
    const DataJob job{
        "left running? " + std::to_string(std::random_device{}()) + std::to_string(std::random_device{}()), 200, 100,
        std::nullopt};
    const DataJob three_digits{job.data, 200, 100, 800};  // compiles the 3-digit kernel, no other
    EXPECT_FALSE(mine_on(target(), engine, three_digits).found);
    const MineResult r = mine_on(target(), engine, job, options);
    EXPECT_TRUE(r.interrupted);
    EXPECT_EQ(opkit::detail::CompileQueue::global().active_jobs(), 0u);
  }
}

}  // namespace
