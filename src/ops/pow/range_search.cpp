// The multi-engine range search (see range_search.hpp).
#include "range_search.hpp"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

#include "opkit/error.hpp"

namespace opkit::ops::detail {
namespace {

// Range ends can be 2^64 (the data scheme's whole nonce space), one past what 64 bits hold.
__extension__ typedef unsigned __int128 Position;

struct Chunk {
  std::uint64_t last = 0;
  bool done = false;
  std::uint64_t tested = 0;
};

class RangeSearch {
 public:
  RangeSearch(const MinePlan& plan, const MineOptions& options)
      : options_(options),
        origin_(plan.first),
        next_(plan.first),
        end_(Position{plan.last} + 1),
        prefix_end_(plan.first) {}

  void run_engine(NonceSearcher& engine) {
    try {
      for (;;) {
        std::uint64_t first = 0, last = 0;
        {
          std::lock_guard lock(mutex_);
          if (should_stop() || next_ >= end_ || (best_ && next_ > *best_)) break;
          Position stop_at = next_ + std::max<std::uint64_t>(1, engine.chunk_size(options_.launch_seconds));
          stop_at = std::min(stop_at, end_);
          if (best_) stop_at = std::min(stop_at, Position{*best_} + 1);
          first = static_cast<std::uint64_t>(next_);
          last = static_cast<std::uint64_t>(stop_at - 1);
          next_ = stop_at;
          chunks_[first] = Chunk{last, false, 0};
        }
        auto keep_going = [this, first] {
          std::lock_guard lock(mutex_);
          return !should_stop() && !(best_ && *best_ < first);
        };
        const ChunkOutcome outcome = engine.search(first, last, keep_going, hashes_);
        {
          std::lock_guard lock(mutex_);
          Chunk& chunk = chunks_[first];
          chunk.done = true;
          chunk.tested = outcome.tested;
          rehashes_ += outcome.rehashed;
          if (outcome.found && (!best_ || *outcome.found < *best_)) best_ = outcome.found;
          advance_prefix();
        }
      }
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
      aborted_ = true;
    }
    {
      std::lock_guard lock(mutex_);
      ++finished_;
    }
    wake_.notify_all();
  }

  // Waits for `engines` engines to finish, reporting progress meanwhile.
  void wait(std::size_t engines, std::chrono::steady_clock::time_point started) {
    const auto period = std::chrono::duration<double>(std::max(0.01, options_.progress_seconds));
    std::unique_lock lock(mutex_);
    while (finished_ < engines) {
      wake_.wait_for(lock, period, [&] { return finished_ >= engines; });
      if (finished_ >= engines || !options_.progress) continue;
      MineProgress p;
      p.hashes = hashes_.load();
      p.total = total();
      p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      p.rate = p.seconds > 0 ? static_cast<double>(p.hashes) / p.seconds : 0;
      lock.unlock();
      options_.progress(p);
      lock.lock();
    }
  }

  MineResult result(const MinePlan& plan) {
    std::lock_guard lock(mutex_);
    if (error_) std::rethrow_exception(error_);
    MineResult r;
    r.hashes = hashes_.load();
    r.rehashes = rehashes_;
    if (best_ && prefix_end_ > *best_) {
      r.found = true;
      r.nonce = *best_;
      r.digest = plan.hash(r.nonce);
      r.hash_hex = plan.hash_hex(r.digest);
      r.searched_through = r.nonce;
      return r;
    }
    r.interrupted = prefix_end_ < end_;
    if (prefix_end_ > plan.first) r.searched_through = static_cast<std::uint64_t>(prefix_end_ - 1);
    return r;
  }

 private:
  bool should_stop() const { return aborted_ || (options_.stop && options_.stop->load()); }

  std::uint64_t total() const {
    const Position size = end_ - Position{origin_};
    return size > std::numeric_limits<std::uint64_t>::max() ? std::numeric_limits<std::uint64_t>::max()
                                                            : static_cast<std::uint64_t>(size);
  }
  // Moves prefix_end_ over the lowest chunks that are fully tested.
  void advance_prefix() {
    while (!chunks_.empty() && Position{chunks_.begin()->first} == prefix_end_) {
      const auto [first, chunk] = *chunks_.begin();
      if (!chunk.done) return;
      prefix_end_ = Position{first} + chunk.tested;
      if (chunk.tested != chunk.last - first + 1) return;  // found or stopped inside it
      chunks_.erase(chunks_.begin());
    }
  }

  const MineOptions& options_;
  const std::uint64_t origin_;
  std::mutex mutex_;
  std::condition_variable wake_;
  Position next_, end_, prefix_end_;
  std::map<std::uint64_t, Chunk> chunks_;
  std::optional<std::uint64_t> best_;
  std::atomic<std::uint64_t> hashes_{0};
  std::uint64_t rehashes_ = 0;  // under mutex_
  std::exception_ptr error_;
  bool aborted_ = false;
  std::size_t finished_ = 0;
};

}  // namespace

MineResult search_range(const MinePlan& plan, std::vector<std::unique_ptr<NonceSearcher>> engines,
                        const MineOptions& options) {
  if (engines.empty()) throw Error(Errc::unavailable, "mine", "no device or CPU engine to mine with");
  const auto started = std::chrono::steady_clock::now();
  RangeSearch search(plan, options);
  std::vector<std::thread> threads;
  threads.reserve(engines.size());
  for (auto& engine : engines) threads.emplace_back([&search, &engine] { search.run_engine(*engine); });
  search.wait(engines.size(), started);
  for (auto& t : threads) t.join();
  MineResult r = search.result(plan);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  for (const auto& engine : engines) r.engines.push_back(engine->name());
  return r;
}

}  // namespace opkit::ops::detail
