// The pool miner's search thread (see pool_miner.hpp).
#include "pool_miner.hpp"

#include "opkit/hex.hpp"
#include "opkit/ops/share_search.hpp"

namespace opkit::cli {

PoolMiner::PoolMiner(const StratumRun& run, ops::MineOptions options)
    : run_(run), options_(std::move(options)), thread_([this] { loop(); }) {}

PoolMiner::~PoolMiner() {
  halt();
}

void PoolMiner::halt() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
    search_stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void PoolMiner::set_work(std::shared_ptr<const PoolWork> work, bool restart) {
  {
    std::lock_guard lock(mutex_);
    work_ = std::move(work);
    if (restart) search_stop_ = true;
  }
  wake_.notify_all();
}

void PoolMiner::clear_work() {
  std::lock_guard lock(mutex_);
  work_.reset();
  search_stop_ = true;
}

std::vector<PoolShare> PoolMiner::take_shares() {
  std::lock_guard lock(mutex_);
  return std::exchange(shares_, {});
}

nlohmann::json PoolMiner::position() const {
  std::lock_guard lock(mutex_);
  return position_;
}

std::exception_ptr PoolMiner::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

void PoolMiner::loop() {
  std::shared_ptr<const PoolWork> current;  // the work whose extranonce2 is being counted
  std::vector<std::uint8_t> e2;
  bool exhausted = false;  // every extranonce2 of `current` searched: wait for another job
  ops::MineOptions options = options_;
  options.stop = &search_stop_;
  options.progress_seconds = 0.1;
  options.progress = [this](const ops::MineProgress& p) { hashes_in_header_ = p.hashes; };
  try {
    for (;;) {
      std::shared_ptr<const PoolWork> work;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return quit_ || (work_ && !(work_ == current && exhausted)); });
        if (quit_) return;
        work = work_;
        search_stop_ = false;  // under the lock: a set_work(restart) from now on stops this search
      }
      if (work != current) {
        current = work;
        e2.assign(work->extranonce.extranonce2_size, 0);
        exhausted = false;
      }
      const std::uint32_t ntime = work->job.ntime;
      const ops::BlockHeader header = ops::stratum_header(work->job, work->extranonce, e2, ntime);
      const auto found = [&](std::uint32_t nonce, const Sha256Digest& digest) {
        std::lock_guard lock(mutex_);
        shares_.push_back({found_share(run_.worker, work->job.job_id, e2, ntime, nonce, digest), work->epoch});
      };
      const ops::ShareSearchResult r = ops::search_shares(header, work->share_target, run_.nonces, options, found);
      hashes_done_ += r.hashes;
      hashes_in_header_ = 0;
      {
        std::lock_guard lock(mutex_);
        position_ = {{"job_id", work->job.job_id},
                     {"extranonce2", to_hex(e2)},
                     {"ntime", ops::stratum_hex32(ntime)},
                     {"searched_through", r.searched_through ? nlohmann::json(*r.searched_through) : nullptr}};
      }
      if (!r.interrupted && !ops::next_extranonce2(e2)) exhausted = true;
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    failure_ = std::current_exception();
  }
}

}  // namespace opkit::cli
