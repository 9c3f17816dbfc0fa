// The OS threads that run CUDA blocks: one per hardware thread (or $OPKIT_CPU_THREADS), created
// on first use and joined when the process's pool is destroyed at exit, each with its own
// BlockRunner and an alternate signal stack (so that a fiber's stack overflow can still be
// reported).
#pragma once

#include <functional>
#include <memory>

#include "block_runner.hpp"

namespace opkit::cpu {

class WorkerPool {
 public:
  // The process's pool (a fresh one after fork(): the parent's threads do not exist in a child).
  static WorkerPool& instance();

  unsigned size() const noexcept { return size_; }

  // Runs body(runner) on `workers` threads of the pool (at most size()) and waits for all of
  // them. One call at a time: concurrent callers queue. `body` must not throw (it runs on the
  // pool's threads; an escaping exception would end the process).
  // While the calling thread has an InterruptCheck (opkit/interrupt.hpp) the wait polls it; when
  // it asks to stop, `stop()` is called once (the bodies must then return soon: BlockRunner leaves
  // its block once it sees the flag that `stop` sets) and the workers are signalled out of kernel
  // code until every body has returned. run() itself returns normally: the caller says why.
  void run(unsigned workers, const std::function<void(BlockRunner&)>& body, const std::function<void()>& stop = {});

  // Waits for a launch in progress, then ends and joins the threads. Never throws.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  struct Shared;

 private:
  explicit WorkerPool(unsigned size);
  unsigned size_;
  std::unique_ptr<Shared> shared_;
};

// Hardware threads this process may run on (its CPU affinity), at least 1.
unsigned hardware_threads();

}  // namespace opkit::cpu
