// BlockRunner: fibers, barriers and faults of the CUDA threads of a block (see block_runner.hpp).
#include "block_runner.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

#include "opkit/error.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define OPKIT_CPU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OPKIT_CPU_ASAN 1
#endif
#endif
#ifdef OPKIT_CPU_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace opkit::cpu {
namespace {

// The strand running kernel code on this OS thread, or null (then no kernel code runs here).
thread_local void* t_current_strand = nullptr;
// The runner of this OS thread (a worker), whose shared memory kernel code here uses.
thread_local BlockRunner* t_runner = nullptr;

std::string dim_text(const opkit_cpu_dim& d) {
  char text[48];
  std::snprintf(text, sizeof text, "(%u,%u,%u)", d.x, d.y, d.z);
  return text;
}

const char* signal_text(int signal, int code) {
  switch (signal) {
    case SIGSEGV:
      return "invalid memory access (SIGSEGV)";
    case SIGBUS:
      return "misaligned or invalid memory access (SIGBUS)";
    case SIGILL:
      return "illegal instruction (SIGILL)";
    case SIGFPE:
      return code == FPE_INTDIV ? "integer division by zero (SIGFPE)"
                                : (code == FPE_INTOVF ? "integer overflow (SIGFPE)" : "arithmetic exception (SIGFPE)");
  }
  return "fatal signal";
}

}  // namespace

bool reverse_thread_order() {
  static const bool reverse = [] {
    const char* env = std::getenv("OPKIT_CPU_THREAD_ORDER");
    const std::string order = env != nullptr ? env : "";
    if (order.empty() || order == "forward") return false;
    if (order == "reverse") return true;
    throw Error(Errc::invalid_argument, "CPU backend",
                "OPKIT_CPU_THREAD_ORDER=" + order + " is neither 'forward' nor 'reverse'");
  }();
  return reverse;
}

BlockRunner::BlockRunner() {
  void* p =
      mmap(nullptr, kMaxDynamicSharedBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw Error(Errc::memory, "CPU backend", "cannot map shared memory: " + std::generic_category().message(errno));
  shared_ = static_cast<unsigned char*>(p);
  t_runner = this;
}

BlockRunner::~BlockRunner() {
  munmap(shared_, kMaxDynamicSharedBytes);
}

const opkit_cpu_runtime& BlockRunner::runtime() {
  static const opkit_cpu_runtime services = {&BlockRunner::barrier, &BlockRunner::trap, &BlockRunner::dynamic_shared};
  return services;
}

void BlockRunner::begin(const opkit_cpu_module& module, const opkit_cpu_kernel& kernel, void** args,
                        const LaunchGeometry& geometry, const SharedObject& object, const std::atomic<bool>& stop) {
  kernel_ = &kernel;
  args_ = args;
  object_ = &object;
  stop_ = &stop;
  block_dim_ = geometry.block;
  threads_per_block_ = std::uint64_t{geometry.block.x} * geometry.block.y * geometry.block.z;
  module.thread_vars(&vars_);
  *vars_.block_dim = geometry.block;
  *vars_.grid_dim = geometry.grid;
  shared_bytes_ = geometry.shared_bytes;
#ifdef OPKIT_CPU_ASAN
  // Bytes past the launch's dynamic shared size are out of bounds, as on the GPU.
  ASAN_UNPOISON_MEMORY_REGION(shared_, shared_bytes_);
  ASAN_POISON_MEMORY_REGION(shared_ + shared_bytes_, kMaxDynamicSharedBytes - shared_bytes_);
#endif
}

bool BlockRunner::run_block(std::uint64_t linear_block) {
  const opkit_cpu_dim grid = *vars_.grid_dim;
  block_idx_.x = static_cast<unsigned int>(linear_block % grid.x);
  block_idx_.y = static_cast<unsigned int>((linear_block / grid.x) % grid.y);
  block_idx_.z = static_cast<unsigned int>(linear_block / (std::uint64_t{grid.x} * grid.y));
  *vars_.block_idx = block_idx_;
  next_thread_ = 0;
  pending_count_ = released_count_ = 0;
  used_ = 0;
  waiting_.clear();
  fault_signal_ = 0;
  fault_message_.clear();

  // Until every thread has started: a strand runs threads until one waits at a barrier, then a
  // new strand takes the next thread.
  while (next_thread_ < threads_per_block_) {
    if (used_ == strands_.size()) {
      auto strand = std::make_unique<Strand>();
      strand->fiber = std::make_unique<Fiber>(kFiberStackBytes, strands_.size());
      strand->runner = this;
      strands_.push_back(std::move(strand));
    }
    Strand& strand = *strands_[used_++];
    strand.fiber->reset(&BlockRunner::strand_main, &strand);
    strand.state = State::running;
    if (!run(strand)) return false;
    if (strand.state == State::at_barrier) waiting_.push_back(&strand);
  }
  // Every live thread is at the same barrier: release it and run each to its next barrier.
  while (!waiting_.empty()) {
    released_count_ = pending_count_;
    pending_count_ = 0;
    std::size_t kept = 0;
    for (Strand* strand : waiting_) {
      *vars_.thread_idx = strand->thread;
      if (!run(*strand)) return false;
      if (strand->state == State::at_barrier) waiting_[kept++] = strand;
    }
    waiting_.resize(kept);
  }
  return true;
}

bool BlockRunner::run(Strand& strand) {
  t_current_strand = &strand;
  strand.fiber->resume();
  t_current_strand = nullptr;
  // A block whose launch is being stopped ends here, whatever its threads were doing: a kernel
  // looping over __syncthreads stops at its next barrier without any signal.
  return strand.state != State::faulted && strand.state != State::stopped && !stopping();
}

void BlockRunner::strand_main(void* raw) {
  auto* strand = static_cast<Strand*>(raw);
  BlockRunner* r = strand->runner;
  while (r->next_thread_ < r->threads_per_block_ && !r->stopping()) {
    const std::uint64_t k = r->next_thread_++;
    const std::uint64_t linear = r->reverse_ ? r->threads_per_block_ - 1 - k : k;
    const opkit_cpu_dim& d = r->block_dim_;
    strand->thread = {static_cast<unsigned int>(linear % d.x), static_cast<unsigned int>(linear / d.x % d.y),
                      static_cast<unsigned int>(linear / (std::uint64_t{d.x} * d.y))};
    strand->state = State::running;
    *r->vars_.thread_idx = strand->thread;
    r->kernel_->run(r->args_);
  }
  strand->state = State::finished;
  strand->fiber->exit();
}

unsigned char* BlockRunner::dynamic_shared() {
  return t_runner != nullptr ? t_runner->shared_ : nullptr;
}

int BlockRunner::barrier(int predicate) {
  auto* strand = static_cast<Strand*>(t_current_strand);
  BlockRunner* r = strand->runner;
  r->pending_count_ += predicate != 0;
  strand->state = State::at_barrier;
  strand->fiber->suspend();
  strand->state = State::running;
  return r->released_count_;
}

void BlockRunner::trap(const char* message) {
  auto* strand = static_cast<Strand*>(t_current_strand);
  if (strand == nullptr) __builtin_trap();  // kernel code outside a launch cannot happen
  BlockRunner* r = strand->runner;
  r->fault_thread_ = strand->thread;
  r->fault_message_ = message;
  strand->state = State::faulted;
  strand->fiber->exit();
}

bool BlockRunner::leave_faulting_kernel(int signal, const siginfo_t* info) {
  auto* strand = static_cast<Strand*>(t_current_strand);
  if (strand == nullptr) return false;
  BlockRunner* r = strand->runner;
  r->fault_thread_ = strand->thread;
  r->fault_signal_ = signal;
  r->fault_code_ = info->si_code;
  r->fault_address_ = info->si_addr;
  r->fault_overflow_ = (signal == SIGSEGV || signal == SIGBUS) && strand->fiber->in_guard_page(info->si_addr);
  strand->state = State::faulted;
  t_current_strand = nullptr;
  strand->fiber->exit();
}

void BlockRunner::leave_stopped_kernel(const void* pc) {
  auto* strand = static_cast<Strand*>(t_current_strand);
  if (strand == nullptr) return;  // between kernels: the scheduler looks at the flag itself
  BlockRunner* r = strand->runner;
  if (r->stop_ == nullptr || !r->stopping() || !r->object_->contains_code(pc)) return;
  strand->state = State::stopped;
  t_current_strand = nullptr;
  strand->fiber->exit();
}

std::string BlockRunner::fault() const {
  std::string text = "block ";
  text.append(dim_text(block_idx_)).append(" thread ").append(dim_text(fault_thread_)).append(": ");
  if (fault_signal_ == 0) return text.append(fault_message_);
  if (fault_overflow_) {
    char detail[96];
    std::snprintf(detail, sizeof detail, "stack overflow (each CUDA thread has a %zu KiB stack on the CPU backend)",
                  kFiberStackBytes / 1024);
    return text.append(detail);
  }
  text.append(signal_text(fault_signal_, fault_code_));
  if (fault_signal_ == SIGSEGV || fault_signal_ == SIGBUS) {
    char address[48];
    std::snprintf(address, sizeof address, " at address %p", fault_address_);
    text.append(address);
  }
  return text;
}

}  // namespace opkit::cpu
