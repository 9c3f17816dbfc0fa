// The mining half of `opkit mine --pool`: a thread that searches the headers of the pool's
// current job, every share of each, and hands the shares to the network half (mine_pool.cpp).
// A job with clean_jobs, or a new connection, stops the header being searched at once (within
// one launch); any other new job is taken up at the next header.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "mine_events.hpp"
#include "mine_stratum.hpp"
#include "opkit/ops/stratum.hpp"

namespace opkit::cli {

struct PoolWork {
  ops::StratumJob job;
  ops::Extranonce extranonce;
  ops::Target share_target;
  double difficulty = 1;
  // Shares of work of an older epoch are stale: the epoch grows with each clean job and each
  // new connection.
  std::uint64_t epoch = 0;
};

struct PoolShare {
  FoundShare share;
  std::uint64_t epoch = 0;
};

class PoolMiner {
 public:
  PoolMiner(const StratumRun& run, ops::MineOptions options);
  ~PoolMiner();  // halt()
  // Stops within one launch and joins the thread; position() is final from then on.
  void halt();
  PoolMiner(const PoolMiner&) = delete;
  PoolMiner& operator=(const PoolMiner&) = delete;

  // New work; `restart` stops the header being searched (clean_jobs, a new connection).
  void set_work(std::shared_ptr<const PoolWork> work, bool restart);
  // No work (disconnected): stop searching until set_work.
  void clear_work();
  // The shares found since the last call.
  std::vector<PoolShare> take_shares();
  // Nonces tested so far, over every header.
  std::uint64_t hashes() const { return hashes_done_.load() + hashes_in_header_.load(); }
  // The header searched last: job_id, extranonce2, ntime, searched_through (null before any).
  nlohmann::json position() const;
  // A mining error (Error from mine()), rethrown on the caller's thread; null while none.
  std::exception_ptr failure() const;

 private:
  void loop();

  const StratumRun run_;
  ops::MineOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<const PoolWork> work_;
  bool quit_ = false;
  std::atomic<bool> search_stop_{false};
  std::vector<PoolShare> shares_;
  std::atomic<std::uint64_t> hashes_done_{0}, hashes_in_header_{0};
  nlohmann::json position_;
  std::exception_ptr failure_;
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace opkit::cli
