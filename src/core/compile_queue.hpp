// CompileQueue: compiles that run beside the call that started them (a data-mode search mines
// on while its specialised kernel compiles) run on the queue's threads. No thread is detached:
// the queue joins them when it is destroyed. But that is not soon enough for a job still running
// at exit: static objects made after the queue (NVRTC creates some during its first compile) are
// destroyed before it, under the running compile (a SEGV in nvrtcCompileProgram at exit, seen on
// the GPU). So every job has an owner, who holds its QueuedJob and, before it goes,
// cancel_or_wait()s it (the mining engines do so in their destructors): once a search returns, no
// compile of its is running.
#pragma once

#include <atomic>
#include <chrono>
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

// Where a queued job is: waiting for a thread, running on one, done (set before its result is),
// or cancelled before it started.
enum class JobStage : int { waiting, running, done, cancelled };

// A queued job, as its owner holds it: the result, and the means to make sure it is not running.
template <class R>
class QueuedJob {
 public:
  QueuedJob(std::shared_future<R> result, std::shared_ptr<std::atomic<JobStage>> stage)
      : result_(std::move(result)), stage_(std::move(stage)) {}

  // The result, waiting for it (rethrows the job's exception). Not after cancel_or_wait() dropped it.
  decltype(auto) get() const { return result_.get(); }
  bool ready() const { return result_.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }
  const std::shared_future<R>& result() const { return result_; }

  // Drops the job if no thread has taken it yet, else waits for it to end: afterwards it is not
  // running and never will be. A compile cannot be interrupted, so this may wait for one. Never
  // throws. True when the job was dropped (its result is then never set).
  bool cancel_or_wait() const noexcept {
    JobStage expected = JobStage::waiting;
    if (stage_->compare_exchange_strong(expected, JobStage::cancelled) || expected == JobStage::cancelled) return true;
    result_.wait();
    return false;
  }

 private:
  std::shared_future<R> result_;
  std::shared_ptr<std::atomic<JobStage>> stage_;
};

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

  // Runs job() on a queue thread unless cancelled first; the result holds its value or its
  // exception. The caller owns the job (see the top of this file).
  template <class Job>
  QueuedJob<std::invoke_result_t<Job&>> submit(Job job) {
    using R = std::invoke_result_t<Job&>;
    auto stage = std::make_shared<std::atomic<JobStage>>(JobStage::waiting);
    auto task = std::make_shared<std::packaged_task<R()>>([job = std::move(job), stage]() mutable -> R {
      // Marked done when the job returns or throws, before the task publishes its result: an
      // owner that saw the result never counts the job as running (active_jobs).
      struct Done {
        std::atomic<JobStage>& stage;
        ~Done() { stage.store(JobStage::done); }
      } done{*stage};
      return job();
    });
    QueuedJob<R> queued(task->get_future().share(), stage);
    enqueue([task] { (*task)(); }, std::move(stage));
    return queued;
  }

  // Threads alive now (running a job, or about to end).
  std::size_t threads() const;
  // Jobs running now or waiting (not cancelled): 0 once every owner has cancelled or waited for
  // its jobs (for tests: a search leaves none behind).
  std::size_t active_jobs() const;
  // Whether destruction has begun (for tests: a job can wait for it).
  bool closing() const;

 private:
  struct Pending {
    std::function<void()> run;
    std::shared_ptr<std::atomic<JobStage>> stage;
  };
  void enqueue(std::function<void()> job, std::shared_ptr<std::atomic<JobStage>> stage);
  void work(std::list<std::thread>::iterator self);
  // Joins the threads that have ended; call without the lock.
  void join_finished();
  static void join(std::list<std::thread>& ended);  // threads that took their last job

  const unsigned max_threads_;
  mutable std::mutex mutex_;
  std::condition_variable all_ended_;
  std::deque<Pending> pending_;
  std::list<std::shared_ptr<std::atomic<JobStage>>> taken_;  // the stages of the jobs threads hold
  std::list<std::thread> running_;                           // threads taking jobs
  std::list<std::thread> finished_;                          // threads that took their last job, to be joined
  bool closing_ = false;
};

}  // namespace opkit::detail
