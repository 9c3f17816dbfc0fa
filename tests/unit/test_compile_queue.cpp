// The compile queue: results and errors reach the futures, no more than its limit run at once,
// an owner's cancel_or_wait drops a job not started and waits for a running one, and destruction
// drops what has not started, finishes what has, and joins every thread.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/compile_queue.hpp"

namespace {

using opkit::detail::CompileQueue;

// A door jobs wait at until the test opens it.
class Gate {
 public:
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
};

TEST(CompileQueue, ResultsAndExceptionsReachTheFutures) {
  CompileQueue queue(3);
  std::vector<std::shared_future<int>> results;
  for (int i = 0; i < 200; ++i) results.push_back(queue.submit([i] { return i * i; }).result());
  auto failing = queue.submit([]() -> int { throw std::runtime_error("no such kernel"); });
  for (int i = 0; i < 200; ++i) EXPECT_EQ(results[static_cast<std::size_t>(i)].get(), i * i);
  EXPECT_THROW(failing.get(), std::runtime_error);
}

TEST(CompileQueue, NoMoreThanItsLimitRunAtOnce) {
  CompileQueue queue(2);
  Gate gate;
  std::atomic<int> running{0}, most{0}, started{0};
  std::vector<std::shared_future<void>> jobs;
  for (int i = 0; i < 6; ++i)
    jobs.push_back(queue
                       .submit([&] {
                         const int now = ++running;
                         int seen = most.load();
                         while (now > seen && !most.compare_exchange_weak(seen, now)) {
                         }
                         ++started;
                         gate.wait();
                         --running;
                       })
                       .result());
  while (started.load() < 2) std::this_thread::yield();
  EXPECT_EQ(started.load(), 2) << "a third job started while two were running";
  EXPECT_LE(queue.threads(), 2u);
  gate.open();
  for (auto& job : jobs) job.get();
  EXPECT_EQ(most.load(), 2);
  EXPECT_EQ(started.load(), 6);
}

TEST(CompileQueue, DestructionFinishesRunningJobsAndDropsPendingOnes) {
  auto queue = std::make_unique<CompileQueue>(1);
  CompileQueue* seen_by_job = queue.get();
  std::atomic<bool> started{false}, finished{false};
  // The running job outlives the call that submitted it, until the queue is being destroyed.
  auto running = queue->submit([&] {
    started = true;
    while (!seen_by_job->closing()) std::this_thread::yield();
    finished = true;
    return 1;
  });
  auto pending = queue->submit([] { return 2; });
  while (!started.load()) std::this_thread::yield();  // the one thread is busy: `pending` waits
  queue.reset();                                      // returns only once the running job is done and its thread joined
  EXPECT_TRUE(finished.load());
  EXPECT_EQ(running.get(), 1);
  try {
    pending.get();
    ADD_FAILURE() << "a job that had not started ran after destruction began";
  } catch (const std::future_error& e) {
    EXPECT_EQ(e.code(), std::future_errc::broken_promise);
  }
}

TEST(CompileQueue, CancelOrWaitDropsAWaitingJobAndWaitsForARunningOne) {
  CompileQueue queue(1);
  Gate gate;
  std::atomic<bool> started{false}, finished{false}, second_ran{false};
  auto running = queue.submit([&] {
    started = true;
    gate.wait();
    finished = true;
    return 1;
  });
  auto waiting = queue.submit([&] {
    second_ran = true;
    return 2;
  });
  while (!started.load()) std::this_thread::yield();
  EXPECT_EQ(queue.active_jobs(), 2u);
  EXPECT_TRUE(waiting.cancel_or_wait()) << "a job no thread had taken was not dropped";
  EXPECT_EQ(queue.active_jobs(), 1u);
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gate.open();
  });
  EXPECT_FALSE(running.cancel_or_wait());
  // Returned only once the running job had ended, and the queue no longer counts it.
  EXPECT_TRUE(finished.load());
  EXPECT_EQ(queue.active_jobs(), 0u);
  EXPECT_EQ(running.get(), 1);
  opener.join();
  // The one thread goes on to the dropped job and skips it.
  auto after = queue.submit([] { return 3; });
  EXPECT_EQ(after.get(), 3);
  EXPECT_FALSE(second_ran.load());
  EXPECT_TRUE(waiting.cancel_or_wait()) << "cancelling twice";
}

TEST(CompileQueue, ThreadsEndWhenTheQueueIsEmpty) {
  CompileQueue queue(4);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::shared_future<int>> results;
    for (int i = 0; i < 8; ++i) results.push_back(queue.submit([i] { return i; }).result());
    for (auto& r : results) r.get();
    // Ended threads are joined on the next submit, so they never pile up.
    EXPECT_LE(queue.threads(), 4u);
  }
}

TEST(CompileQueue, SubmittingFromManyThreadsRunsEveryJobOnce) {
  CompileQueue queue(3);
  std::atomic<int> runs{0};
  std::vector<std::thread> submitters;
  std::mutex mutex;
  std::vector<std::shared_future<void>> jobs;
  for (int t = 0; t < 4; ++t)
    submitters.emplace_back([&] {
      for (int i = 0; i < 250; ++i) {
        auto job = queue.submit([&] { ++runs; });
        std::lock_guard lock(mutex);
        jobs.push_back(job.result());
      }
    });
  for (auto& s : submitters) s.join();
  for (auto& job : jobs) job.get();
  EXPECT_EQ(runs.load(), 1000);
}

}  // namespace
