// The compile queue's threads (see compile_queue.hpp).
#include "compile_queue.hpp"

#include <algorithm>

#include "module_cache.hpp"
#include "opkit/backend.hpp"
#include "opkit/cache.hpp"
#include "registry_list.hpp"

namespace opkit::detail {

CompileQueue::CompileQueue(unsigned max_threads) : max_threads_(std::max(1u, max_threads)) {}

CompileQueue::~CompileQueue() {
  try {
    std::deque<Pending> dropped;
    {
      std::unique_lock lock(mutex_);
      closing_ = true;
      dropped.swap(pending_);
      all_ended_.wait(lock, [this] { return running_.empty(); });
    }
    dropped.clear();  // breaks the promises of the jobs that never ran
    join_finished();
  } catch (...) {  // std::system_error from a lock or a join: a destructor must not throw
  }
}

CompileQueue& CompileQueue::global() {
  // Everything a queued compile uses must be destroyed after the queue, so it exists before it.
  KernelCache::global();
  ModuleCache::global();
  static const bool compilers_loaded = [] {
    for (const auto& backend : registered_backends()) backend->load_compiler();
    return true;
  }();
  (void)compilers_loaded;
  // Compiles spend most of their time in NVRTC or the host compiler; a few at a time is plenty
  // (a search starts at most three), and more would only compete for the cores it mines on.
  static CompileQueue queue(8);
  return queue;
}

void CompileQueue::enqueue(std::function<void()> job, std::shared_ptr<std::atomic<JobStage>> stage) {
  // Threads that have ended are taken out under the same lock that decides whether to start one,
  // and joined after it: taken out before that lock, a thread ending in between would still be
  // counted beside the one started for it (threads() one over max_threads).
  std::list<std::thread> ended;
  {
    std::lock_guard lock(mutex_);
    ended.swap(finished_);
    pending_.push_back({std::move(job), std::move(stage)});
    if (running_.size() < max_threads_) {
      // The thread starts under the lock, so it finds its own list entry filled in.
      auto self = running_.emplace(running_.end());
      try {
        *self = std::thread(&CompileQueue::work, this, self);
      } catch (...) {
        running_.erase(self);
        if (running_.empty()) {  // no thread will take the job: it must not wait forever
          pending_.pop_back();
          join(ended);
          throw;
        }
      }
    }
  }
  join(ended);
}

void CompileQueue::work(std::list<std::thread>::iterator self) {
  std::unique_lock lock(mutex_);
  while (!pending_.empty() && !closing_) {
    Pending job = std::move(pending_.front());
    pending_.pop_front();
    // Taken under the lock, so active_jobs() never misses a job between the queue and its run.
    JobStage expected = JobStage::waiting;
    const bool run = job.stage->compare_exchange_strong(expected, JobStage::running);
    const auto held = run ? taken_.insert(taken_.end(), job.stage) : taken_.end();
    lock.unlock();
    if (run) job.run();  // a packaged_task: it keeps the job's exception for the future
    job.run = nullptr;   // a cancelled job's promise breaks here
    lock.lock();
    if (run) taken_.erase(held);
  }
  finished_.splice(finished_.end(), running_, self);
  if (running_.empty()) all_ended_.notify_all();
}

void CompileQueue::join_finished() {
  std::list<std::thread> ended;
  {
    std::lock_guard lock(mutex_);
    ended.swap(finished_);
  }
  join(ended);
}

void CompileQueue::join(std::list<std::thread>& ended) {
  for (std::thread& thread : ended)
    if (thread.joinable()) thread.join();
}

std::size_t CompileQueue::threads() const {
  std::lock_guard lock(mutex_);
  return running_.size() + finished_.size();
}

std::size_t CompileQueue::active_jobs() const {
  std::lock_guard lock(mutex_);
  std::size_t active = 0;
  for (const Pending& job : pending_) active += job.stage->load() == JobStage::waiting ? 1 : 0;
  for (const auto& stage : taken_) active += stage->load() == JobStage::running ? 1 : 0;
  return active;
}

bool CompileQueue::closing() const {
  std::lock_guard lock(mutex_);
  return closing_;
}

}  // namespace opkit::detail
