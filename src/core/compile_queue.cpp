// The compile queue's threads (see compile_queue.hpp).
#include "compile_queue.hpp"

#include <algorithm>

#include "module_cache.hpp"
#include "opkit/backend.hpp"
#include "registry_list.hpp"
#include "opkit/cache.hpp"

namespace opkit::detail {

CompileQueue::CompileQueue(unsigned max_threads) : max_threads_(std::max(1u, max_threads)) {}

CompileQueue::~CompileQueue() {
  try {
    std::deque<std::function<void()>> dropped;
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

void CompileQueue::enqueue(std::function<void()> job) {
  join_finished();
  std::lock_guard lock(mutex_);
  pending_.push_back(std::move(job));
  if (running_.size() < max_threads_) {
    // The thread starts under the lock, so it finds its own list entry filled in.
    auto self = running_.emplace(running_.end());
    try {
      *self = std::thread(&CompileQueue::work, this, self);
    } catch (...) {
      running_.erase(self);
      if (running_.empty()) {  // no thread will take the job: it must not wait forever
        pending_.pop_back();
        throw;
      }
    }
  }
}

void CompileQueue::work(std::list<std::thread>::iterator self) {
  std::unique_lock lock(mutex_);
  while (!pending_.empty() && !closing_) {
    std::function<void()> job = std::move(pending_.front());
    pending_.pop_front();
    lock.unlock();
    job();  // a packaged_task: it keeps the job's exception for the future
    job = nullptr;
    lock.lock();
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
  for (std::thread& thread : ended)
    if (thread.joinable()) thread.join();
}

std::size_t CompileQueue::threads() const {
  std::lock_guard lock(mutex_);
  return running_.size() + finished_.size();
}

bool CompileQueue::closing() const {
  std::lock_guard lock(mutex_);
  return closing_;
}

}  // namespace opkit::detail
