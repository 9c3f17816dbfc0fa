// WorkerPool: a condition-variable pool whose threads live until the pool is destroyed (see
// worker_pool.hpp).
#include "worker_pool.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "fault_signals.hpp"
#include "opkit/error.hpp"
#include "opkit/interrupt.hpp"

namespace opkit::cpu {

struct WorkerPool::Shared {
  std::mutex launch;  // serialises run()
  std::mutex mutex;
  std::condition_variable wake, done;
  std::uint64_t generation = 0;
  unsigned active = 0, remaining = 0, started = 0;
  const std::function<void(BlockRunner&)>* body = nullptr;
  std::string start_error;
  bool quit = false;                 // the pool is being destroyed: workers end
  std::vector<std::thread> threads;  // joined by ~WorkerPool
};

namespace {

void worker_main(WorkerPool::Shared* shared, unsigned index) {
  install_alternate_signal_stack();
  std::unique_ptr<BlockRunner> runner;
  {
    std::lock_guard lock(shared->mutex);
    try {
      runner = std::make_unique<BlockRunner>();
    } catch (const std::exception& e) {
      shared->start_error = e.what();
    }
    ++shared->started;
  }
  shared->done.notify_all();
  if (!runner) return;
  std::uint64_t seen = 0;
  for (;;) {
    const std::function<void(BlockRunner&)>* body;
    {
      std::unique_lock lock(shared->mutex);
      shared->wake.wait(lock, [&] { return shared->quit || (shared->generation != seen && index < shared->active); });
      if (shared->quit) return;
      seen = shared->generation;
      body = shared->body;
    }
    (*body)(*runner);
    std::lock_guard lock(shared->mutex);
    if (--shared->remaining == 0) shared->done.notify_all();
  }
}

}  // namespace

unsigned hardware_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<unsigned>(CPU_COUNT(&set));
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? n : 1;
}

WorkerPool::WorkerPool(unsigned size) : size_(size), shared_(std::make_unique<Shared>()) {}

WorkerPool::~WorkerPool() {
  try {
    std::lock_guard launch_lock(shared_->launch);  // a launch in progress finishes first
    {
      std::lock_guard lock(shared_->mutex);
      shared_->quit = true;
    }
    shared_->wake.notify_all();
    for (std::thread& thread : shared_->threads)
      if (thread.joinable()) thread.join();
  } catch (...) {  // std::system_error from a lock or a join: a destructor must not throw
  }
}

namespace {

// The process's pool, destroyed (its threads joined) at exit. A pool inherited over fork() has
// no threads in the child, so it must never be joined or destroyed there: it is set aside.
struct ProcessPool {
  std::mutex mutex;
  WorkerPool* pool = nullptr;
  pid_t owner = 0;
  std::vector<WorkerPool*> inherited;  // the parents' pools, kept reachable, never destroyed
  ~ProcessPool() {
    if (pool != nullptr && owner == getpid()) delete pool;
  }
};

}  // namespace

WorkerPool& WorkerPool::instance() {
  static ProcessPool process;
  std::lock_guard lock(process.mutex);
  WorkerPool*& pool = process.pool;
  if (pool == nullptr || process.owner != getpid()) {
    unsigned size = hardware_threads();
    if (const char* env = std::getenv("OPKIT_CPU_THREADS"); env != nullptr && *env != '\0') {
      char* end = nullptr;
      long n = std::strtol(env, &end, 10);
      if (*end != '\0' || n < 1 || n > 4096)
        throw Error(Errc::invalid_argument, "CPU backend",
                    std::string("OPKIT_CPU_THREADS=") + env + " is not a thread count between 1 and 4096");
      size = static_cast<unsigned>(n);
    }
    reverse_thread_order();  // a bad OPKIT_CPU_THREAD_ORDER is the caller's error, not a worker's
    if (pool != nullptr) process.inherited.push_back(pool);
    pool = new WorkerPool(size);
    process.owner = getpid();
  }
  return *pool;
}

void WorkerPool::run(unsigned workers, const std::function<void(BlockRunner&)>& body,
                     const std::function<void()>& stop) {
  if (workers == 0) return;
  if (workers > size_) workers = size_;
  std::lock_guard launch_lock(shared_->launch);
  install_fault_handlers();
  std::unique_lock lock(shared_->mutex);
  while (shared_->started < workers && shared_->start_error.empty()) {
    unsigned index = shared_->started;
    try {
      shared_->threads.emplace_back(worker_main, shared_.get(), index);
    } catch (const std::system_error& e) {
      throw Error(Errc::runtime, "CPU backend", std::string("cannot start a worker thread: ") + e.what());
    }
    shared_->done.wait(lock, [&] { return shared_->started > index; });
  }
  if (!shared_->start_error.empty())
    throw Error(Errc::runtime, "CPU backend", "cannot start a worker thread: " + shared_->start_error);
  shared_->body = &body;
  shared_->active = workers;
  shared_->remaining = workers;
  ++shared_->generation;
  shared_->wake.notify_all();
  const auto finished = [&] { return shared_->remaining == 0; };
  if (!interrupt_check_installed() || !stop) {
    shared_->done.wait(lock, finished);
  } else {
    bool stopping = false;
    while (!shared_->done.wait_for(lock, kInterruptPollInterval, finished)) {
      if (!stopping) {
        lock.unlock();  // the check may take a while (Python takes its lock to run signal handlers)
        stopping = interrupt_requested();
        if (stopping) {
          install_stop_handler();
          stop();
        }
        lock.lock();
        if (!stopping) continue;
      }
      // Again every interval: a worker that was outside kernel code when signalled (in the
      // runtime, or in a library call that may hold a lock) is left alone until a later one.
      for (unsigned i = 0; i < shared_->active; ++i) signal_stop(shared_->threads[i].native_handle());
    }
  }
  shared_->body = nullptr;
  shared_->active = 0;
}

}  // namespace opkit::cpu
