// CompileQueue: compiles that may outlive the call that started them (a stopped search must not
// wait for NVRTC) run on the queue's threads, and the queue joins them when it is destroyed: no
// detached threads, nothing left running while the process tears down what compiles use.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>

namespace opkit::detail {

class CompileQueue {
 public:
  // At most `max_threads` jobs run at once (at least 1); more wait their turn, first in first out.
  // Threads start when jobs arrive and end when none are left.
  explicit CompileQueue(unsigned max_threads);
  // Jobs not yet started are dropped (their futures report std::future_errc::broken_promise);
  // running ones finish, and every thread is joined. Never throws.
  ~CompileQueue();
  CompileQueue(const CompileQueue&) = delete;
  CompileQueue& operator=(const CompileQueue&) = delete;

  // The process's queue. Created after the process-wide kernel and module caches, so destroyed
  // (and joined) before them at exit.
  static CompileQueue& global();

  // Runs job() on a queue thread; the future holds its result or its exception.
  template <class Job>
  std::shared_future<std::invoke_result_t<Job&>> submit(Job job) {
    auto task = std::make_shared<std::packaged_task<std::invoke_result_t<Job&>()>>(std::move(job));
    auto result = task->get_future().share();
    enqueue([task] { (*task)(); });
    return result;
  }

  // Threads alive now (running a job, or about to end).
  std::size_t threads() const;
  // Whether destruction has begun (for tests: a job can wait for it).
  bool closing() const;

 private:
  void enqueue(std::function<void()> job);
  void work(std::list<std::thread>::iterator self);
  // Joins the threads that have ended; call without the lock.
  void join_finished();

  const unsigned max_threads_;
  mutable std::mutex mutex_;
  std::condition_variable all_ended_;
  std::deque<std::function<void()>> pending_;
  std::list<std::thread> running_;   // threads taking jobs
  std::list<std::thread> finished_;  // threads that took their last job, to be joined
  bool closing_ = false;
};

}  // namespace opkit::detail
