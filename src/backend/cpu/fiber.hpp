// Fibers for the CUDA threads of one block: a stack each and a cooperative switch to and from the
// OS thread's scheduler. x86-64 uses a small assembly switch (glibc's swapcontext makes a signal
// mask syscall per switch); other machines use ucontext.
#pragma once

#include <cstddef>
#include <memory>

namespace opkit::cpu {

class Fiber {
 public:
  // An mmap'd stack of `stack_bytes` with a PROT_NONE guard region below it, so that an overflow
  // faults instead of corrupting memory. `index` staggers where the stack starts: page-aligned
  // tops would put every fiber's hot frames in the same cache sets. Throws Error(Errc::memory).
  Fiber(std::size_t stack_bytes, std::size_t index);
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // The next resume() starts entry(arg) at the top of the stack (whatever ran before is dropped).
  void reset(void (*entry)(void*), void* arg);
  // Scheduler side: runs the fiber until it suspends or exits.
  void resume();
  // Fiber side: back to the scheduler; returns when resumed.
  void suspend();
  // Fiber side: back to the scheduler for good; the fiber's frames are abandoned until reset().
  // Also used from a signal handler running on the fiber's behalf.
  [[noreturn]] void exit();

  // Whether `address` is in the guard region (a stack overflow).
  bool in_guard_page(const void* address) const;
  std::size_t stack_bytes() const noexcept { return stack_bytes_; }

  struct Contexts;  // the saved scheduler and fiber contexts (fiber.cpp)

 private:
  unsigned char* mapping_ = nullptr;  // guard region, then the stack
  std::size_t mapping_bytes_ = 0, stack_bytes_ = 0;
  std::size_t top_offset_ = 0;   // bytes left unused at the top (cache colouring)
  unsigned valgrind_stack_ = 0;  // the stack's id under valgrind (see fiber.cpp)
  std::unique_ptr<Contexts> contexts_;
};

}  // namespace opkit::cpu
