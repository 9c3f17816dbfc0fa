// Runs the CUDA blocks of a launch on one OS thread. The threads of a block run one after another
// on one fiber; when a thread reaches __syncthreads, the next thread starts on a new fiber, and
// once every thread has started, the suspended ones are resumed in order, one barrier at a time.
// A kernel that never synchronises costs one fiber switch per block, not per thread.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fiber.hpp"
#include "opkit_cpu_abi.h"
#include "shared_object.hpp"

namespace opkit::cpu {

// Each worker's `extern __shared__` memory: at one address for the thread's lifetime (the
// kernel's thread_local pointers to it are initialised once), sized for sm_90's largest opt-in.
// One BlockRunner per worker thread, created on that thread.
inline constexpr std::size_t kMaxDynamicSharedBytes = 227 * 1024;
// Stack of each CUDA thread (a fiber); an overflow hits a guard page and is reported.
inline constexpr std::size_t kFiberStackBytes = 256 * 1024;

struct LaunchGeometry {
  opkit_cpu_dim grid, block;
  std::uint32_t shared_bytes = 0;
};

// Whether a block's threads run in reverse index order: OPKIT_CPU_THREAD_ORDER=reverse (default
// "forward"). Between two barriers a GPU runs a block's threads in no set order, while the CPU
// backend runs them one after another, so a kernel missing a barrier works there whenever each
// thread reads only what lower-numbered threads wrote; run backwards, it reads what is not written
// yet, and the tests fail as they would on a GPU. Read once; throws opkit::Error for another value.
bool reverse_thread_order();

class BlockRunner {
 public:
  BlockRunner();
  ~BlockRunner();
  BlockRunner(const BlockRunner&) = delete;
  BlockRunner& operator=(const BlockRunner&) = delete;

  // Prepares this OS thread to run blocks of `kernel` (binds the module's thread-locals here).
  // `object` holds the kernel's code; once `stop` is true the launch is being stopped (both
  // outlive the launch's blocks on this thread).
  void begin(const opkit_cpu_module& module, const opkit_cpu_kernel& kernel, void** args,
             const LaunchGeometry& geometry, const SharedObject& object, const std::atomic<bool>& stop);
  // Runs one block (linear index in the grid). False when a thread faulted (fault() says how) or
  // the launch is being stopped (the block is left where it was).
  bool run_block(std::uint64_t linear_block);
  // "block (1,0,0) thread (5,0,0): <what happened>"
  std::string fault() const;

  // The services behind opkit_cpu_runtime, called from kernel code on this runner's fibers.
  static const opkit_cpu_runtime& runtime();
  // From a SIGSEGV/SIGBUS/SIGFPE/SIGILL handler: when a kernel fiber of this OS thread faulted,
  // records it and leaves the fiber (does not return); otherwise returns false.
  static bool leave_faulting_kernel(int signal, const siginfo_t* info);
  // From the stop signal's handler (fault_signals.cpp), `pc` being where it interrupted this OS
  // thread: when the launch is being stopped and `pc` is in the kernel's own code, leaves the
  // kernel (does not return). Anywhere else (opkit's runtime, a library the kernel called, which
  // may hold a lock) it returns, and the launch stops at the next barrier, thread or block, or at
  // a later signal.
  static void leave_stopped_kernel(const void* pc);

 private:
  enum class State { running, at_barrier, finished, faulted, stopped };
  struct Strand {
    std::unique_ptr<Fiber> fiber;
    BlockRunner* runner = nullptr;
    opkit_cpu_dim thread{};
    State state = State::running;
  };

  static void strand_main(void* strand);
  static int barrier(int predicate);
  static unsigned char* dynamic_shared();
  [[noreturn]] static void trap(const char* message);
  bool run(Strand& strand);
  bool stopping() const { return stop_->load(std::memory_order_relaxed); }

  const opkit_cpu_kernel* kernel_ = nullptr;
  void** args_ = nullptr;
  const SharedObject* object_ = nullptr;
  const std::atomic<bool>* stop_ = nullptr;
  opkit_cpu_thread_vars vars_{};
  opkit_cpu_dim block_dim_{}, block_idx_{};
  std::uint64_t threads_per_block_ = 0, next_thread_ = 0;  // threads started, in run order
  bool reverse_ = reverse_thread_order();
  int pending_count_ = 0, released_count_ = 0;  // barrier predicates: arriving / just passed

  std::vector<std::unique_ptr<Strand>> strands_;  // strands_[0..used) serve the current block
  std::size_t used_ = 0;
  std::vector<Strand*> waiting_;  // at a barrier, in run order

  unsigned char* shared_ = nullptr;  // kMaxDynamicSharedBytes, mmap'd
  std::uint32_t shared_bytes_ = 0;

  // The fault, recorded without allocating (a signal handler may record it).
  opkit_cpu_dim fault_thread_{};
  int fault_signal_ = 0, fault_code_ = 0;
  const void* fault_address_ = nullptr;
  bool fault_overflow_ = false;
  std::string fault_message_;
};

}  // namespace opkit::cpu
