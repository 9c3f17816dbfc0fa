// opkit::mpi::mine: the range in rounds over all ranks (mine_rounds.hpp), each rank running the
// range search of ops::mine over its own engines, which it keeps from round to round.
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mine_rounds.hpp"
#include "opkit/error.hpp"
#include "opkit/mpi.hpp"
#include "pow/cpu_miner.hpp"
#include "pow/kernel_miner.hpp"
#include "pow/mine_plan.hpp"
#include "pow/range_search.hpp"

namespace opkit::mpi {
namespace {

using detail::Position;
using detail::RoundOutcome;
using detail::RoundReport;
using ops::detail::MinePlan;
using ops::detail::NonceSearcher;

// The range search owns its engines; each round lends it the rank's long-lived ones (their
// compiled kernels and measured rates carry over).
class LentSearcher final : public NonceSearcher {
 public:
  explicit LentSearcher(NonceSearcher& engine) : engine_(engine) {}
  std::string name() const override { return engine_.name(); }
  std::uint64_t chunk_size(double seconds) override { return engine_.chunk_size(seconds); }
  ops::detail::ChunkOutcome search(std::uint64_t first, std::uint64_t last, const std::function<bool()>& keep_going,
                                   std::atomic<std::uint64_t>& hashes) override {
    return engine_.search(first, last, keep_going, hashes);
  }

 private:
  NonceSearcher& engine_;
};

// As ops::mine picks engines, but from this rank's share of the node's devices and cores.
std::vector<std::unique_ptr<NonceSearcher>> rank_engines(const MinePlan& plan, const ops::MineOptions& options,
                                                         const World& world) {
  if (!(options.launch_seconds > 0) || options.launch_seconds > 60)
    throw Error(Errc::invalid_argument, "mpi mine", "launch_seconds must be in (0, 60]");
  if (options.cpu_threads < 0)
    throw Error(Errc::invalid_argument, "mpi mine", "cpu_threads must be >= 0 (0: this rank's share of the cores)");
  std::vector<Device> devices = options.devices;
  if (devices.empty() && !options.cpu) devices = ops::mine_support().gpus();
  for (const Device& device : devices) ops::mine_support().require(device);
  std::vector<std::unique_ptr<NonceSearcher>> engines;
  for (Device& device : node_share(devices, world))
    engines.push_back(ops::detail::make_kernel_searcher(plan, std::move(device), options.launch_seconds));
  if (options.cpu || engines.empty()) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int threads = options.cpu_threads > 0 ? options.cpu_threads : node_share_of_cores(cores, world);
    engines.push_back(ops::detail::make_cpu_searcher(plan, threads));
  }
  return engines;
}

std::uint64_t engine_sizes(const std::vector<std::unique_ptr<NonceSearcher>>& engines, double round_seconds) {
  std::uint64_t sum = 0;
  for (const auto& engine : engines) {
    const std::uint64_t size = engine->chunk_size(round_seconds);
    sum =
        size > std::numeric_limits<std::uint64_t>::max() - sum ? std::numeric_limits<std::uint64_t>::max() : sum + size;
  }
  return sum;
}

// Test hook (tests/cli/test_mpi_fail.sh): OPKIT_TEST_MPI_FAIL_RANK=R makes rank R throw after its
// first round, while the other ranks wait for it in the round's collective call.
bool fails_on_purpose(const World& world) {
  const char* value = std::getenv("OPKIT_TEST_MPI_FAIL_RANK");
  return value != nullptr && *value != '\0' && std::to_string(world.rank) == value;
}

// This rank's round: its chunk through the range search over its lent engines.
RoundReport search_chunk(const MinePlan& plan, detail::RoundChunk chunk,
                         const std::vector<std::unique_ptr<NonceSearcher>>& engines, const ops::MineOptions& options,
                         double& seconds) {
  RoundReport report;
  report.count = chunk.count;
  seconds = 0;
  if (chunk.count == 0) return report;
  MinePlan round = plan;
  round.first = chunk.first;
  round.last = chunk.first + (chunk.count - 1);
  ops::MineOptions round_options;
  round_options.stop = options.stop;
  round_options.launch_seconds = options.launch_seconds;
  std::vector<std::unique_ptr<NonceSearcher>> lent;
  lent.reserve(engines.size());
  for (const auto& engine : engines) lent.push_back(std::make_unique<LentSearcher>(*engine));
  const ops::MineResult r = ops::detail::search_range(round, std::move(lent), round_options);
  if (r.found) {
    report.found = r.nonce;
    report.tested = r.nonce - chunk.first + 1;
  } else if (r.searched_through) {
    report.tested = *r.searched_through - chunk.first + 1;
  }
  report.hashes = r.hashes;
  seconds = r.seconds;
  return report;
}

// Every rank's engine names, as "rank R on HOST: NAME", in rank order.
std::vector<std::string> all_engine_names(const std::vector<std::unique_ptr<NonceSearcher>>& engines,
                                          const World& world) {
  std::string local;
  for (const auto& engine : engines)
    local += "rank " + std::to_string(world.rank) + " on " + world.host + ": " + engine->name() + "\n";
  int length = static_cast<int>(local.size());
  std::vector<int> lengths(static_cast<std::size_t>(world.size)), displs(lengths.size());
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    displs[r] = total;
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Allgatherv(local.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> names;
  std::istringstream lines(all);
  for (std::string line; std::getline(lines, line);) names.push_back(line);
  return names;
}

ops::MineResult run(const MinePlan& plan, const ops::MineOptions& options, double round_seconds) {
  if (!(round_seconds > 0) || round_seconds > 60)
    throw Error(Errc::invalid_argument, "mpi mine", "round_seconds must be in (0, 60]");
  const World& world = init();
  const auto started = std::chrono::steady_clock::now();
  const auto engines = rank_engines(plan, options, world);
  const bool fail = fails_on_purpose(world);
  const Position end = Position{plan.last} + 1;
  const auto ranks = static_cast<std::size_t>(world.size);

  std::vector<std::uint64_t> sizes(ranks);
  std::uint64_t first_size = engine_sizes(engines, round_seconds);
  MPI_Allgather(&first_size, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);

  std::vector<std::uint64_t> words(ranks * RoundReport::word_count);
  std::vector<RoundReport> reports(ranks);
  std::uint64_t hashes = 0, elapsed_us = 0;
  Position base = plan.first;
  RoundOutcome outcome;
  for (;;) {
    const detail::RoundChunk chunk = detail::chunk_of(base, sizes, world.rank, end);
    double seconds = 0;
    RoundReport report = search_chunk(plan, chunk, engines, options, seconds);
    report.stop = options.stop != nullptr && options.stop->load();
    report.next_size = detail::next_chunk_size(chunk.count, report.hashes, seconds, round_seconds,
                                               engine_sizes(engines, round_seconds));
    report.elapsed_us = static_cast<std::uint64_t>(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - started).count());
    if (fail)
      throw Error(Errc::runtime, "mpi mine",
                  "rank " + std::to_string(world.rank) +
                      " failed on purpose after its first round (test hook OPKIT_TEST_MPI_FAIL_RANK)");

    const auto sent = report.words();
    MPI_Allgather(sent.data(), RoundReport::word_count, MPI_UINT64_T, words.data(), RoundReport::word_count,
                  MPI_UINT64_T, MPI_COMM_WORLD);
    for (std::size_t r = 0; r < ranks; ++r) {
      reports[r] = RoundReport::from_words(std::span<const std::uint64_t, RoundReport::word_count>(
          words.data() + r * RoundReport::word_count, RoundReport::word_count));
      hashes += reports[r].hashes;
      elapsed_us = std::max(elapsed_us, reports[r].elapsed_us);
      sizes[r] = reports[r].next_size;
    }
    outcome = detail::combine(base, reports, end);
    if (options.progress && world.rank == 0) {
      ops::MineProgress p;
      p.hashes = hashes;
      const Position size = end - Position{plan.first};
      p.total = size > std::numeric_limits<std::uint64_t>::max() ? std::numeric_limits<std::uint64_t>::max()
                                                                 : static_cast<std::uint64_t>(size);
      p.seconds = static_cast<double>(elapsed_us) * 1e-6;
      p.rate = p.seconds > 0 ? static_cast<double>(hashes) / p.seconds : 0;
      options.progress(p);
    }
    if (outcome.state != RoundOutcome::State::go_on) break;
    base = outcome.searched_end;
  }

  ops::MineResult result;
  result.hashes = hashes;
  result.seconds = static_cast<double>(elapsed_us) * 1e-6;
  if (outcome.state == RoundOutcome::State::found) {
    result.found = true;
    result.nonce = outcome.nonce;
    result.digest = plan.hash(outcome.nonce);
    result.hash_hex = plan.hash_hex(result.digest);
  } else {
    result.interrupted = outcome.state == RoundOutcome::State::stopped;
  }
  if (outcome.searched_end > Position{plan.first})
    result.searched_through = static_cast<std::uint64_t>(outcome.searched_end - 1);
  result.engines = all_engine_names(engines, world);
  return result;
}

}  // namespace

ops::MineResult mine(const ops::BitcoinJob& job, const ops::MineOptions& options, double round_seconds) {
  return run(ops::detail::make_plan(job), options, round_seconds);
}

ops::MineResult mine(const ops::DataJob& job, const ops::MineOptions& options, double round_seconds) {
  return run(ops::detail::make_plan(job), options, round_seconds);
}

}  // namespace opkit::mpi
