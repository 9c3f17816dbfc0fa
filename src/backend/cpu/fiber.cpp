// Fiber stacks and context switches (see fiber.hpp). Under AddressSanitizer every switch is
// announced to it, and a reused stack is unpoisoned, or ASan would misreport the fibers' frames.
// Built where valgrind's header exists (OPKIT_CPU_VALGRIND, from CMake), each stack is registered
// with valgrind, which otherwise takes a switch for a huge frame and reports the fibers' accesses.
#include "fiber.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>

#include "opkit/error.hpp"

#if defined(__x86_64__) && !defined(OPKIT_CPU_UCONTEXT_FIBERS)
#define OPKIT_CPU_ASM_FIBERS 1
#else
#include <ucontext.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define OPKIT_CPU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OPKIT_CPU_ASAN 1
#endif
#endif
#ifdef OPKIT_CPU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef OPKIT_CPU_VALGRIND
#include <valgrind/valgrind.h>
#endif

#ifdef OPKIT_CPU_ASM_FIBERS
extern "C" {
// Saves the callee-saved registers on the current stack, stores the stack pointer to *save_sp,
// and continues on the stack `load_sp` (its saved frame). The x87 and SSE control words are not
// switched: every fiber of a worker runs with the worker's (default) floating-point modes, and
// reloading them (fldcw, ldmxcsr) would double the cost of a switch.
void opkit_cpu_switch_stack(void** save_sp, void* load_sp);
// First code of a new fiber, entered by the `ret` of opkit_cpu_switch_stack: calls r12(r13).
void opkit_cpu_fiber_start();
}
asm(R"(
  .pushsection .text
  .globl opkit_cpu_switch_stack
  .hidden opkit_cpu_switch_stack
  .type opkit_cpu_switch_stack, @function
  .p2align 4
opkit_cpu_switch_stack:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size opkit_cpu_switch_stack, .-opkit_cpu_switch_stack

  .globl opkit_cpu_fiber_start
  .hidden opkit_cpu_fiber_start
  .type opkit_cpu_fiber_start, @function
  .p2align 4
opkit_cpu_fiber_start:
  .cfi_startproc
  .cfi_undefined rip
  movq %r13, %rdi
  andq $-16, %rsp
  callq *%r12
  ud2
  .cfi_endproc
  .size opkit_cpu_fiber_start, .-opkit_cpu_fiber_start
  .popsection
)");
#endif

namespace opkit::cpu {

struct Fiber::Contexts {
#ifdef OPKIT_CPU_ASM_FIBERS
  void* fiber_sp = nullptr;
  void* scheduler_sp = nullptr;
#else
  ucontext_t fiber{};
  ucontext_t scheduler{};
#endif
#ifdef OPKIT_CPU_ASAN
  void* fiber_fake_stack = nullptr;
  void* scheduler_fake_stack = nullptr;
  const void* scheduler_bottom = nullptr;
  std::size_t scheduler_size = 0;
#endif
  void (*entry)(void*) = nullptr;
  void* arg = nullptr;
};

namespace {

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

// Below each stack: address space only, never committed. Wide enough that a large frame in a
// kernel compiled without stack probes still lands in it.
std::size_t guard_bytes() {
  return 16 * page_size() > 65536 ? 16 * page_size() : 65536;
}

[[noreturn]] void fiber_main(void* raw) {
  auto* c = static_cast<Fiber::Contexts*>(raw);
#ifdef OPKIT_CPU_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &c->scheduler_bottom, &c->scheduler_size);
#endif
  c->entry(c->arg);
  __builtin_trap();  // entries end with Fiber::exit(); returning here is a bug in the caller
}

#ifndef OPKIT_CPU_ASM_FIBERS
void ucontext_main(unsigned int hi, unsigned int lo) {
  fiber_main(reinterpret_cast<void*>((static_cast<std::uintptr_t>(hi) << 32) | lo));
}
#endif

}  // namespace

Fiber::Fiber(std::size_t stack_bytes, std::size_t index) : contexts_(std::make_unique<Contexts>()) {
  const std::size_t page = page_size();
  // 4160 = 4096 + 64: consecutive fibers differ in both their L1 set (bits 6..11) and their
  // page within a 64 KiB window (the L2 set bits).
  top_offset_ = (index * 4160) % 65536;
  stack_bytes_ = (stack_bytes + top_offset_ + page - 1) / page * page;
  mapping_bytes_ = stack_bytes_ + guard_bytes();
  void* p = mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (p == MAP_FAILED)
    throw Error(Errc::memory, "CPU backend", "cannot map a fiber stack: " + std::generic_category().message(errno));
  mapping_ = static_cast<unsigned char*>(p);
  mprotect(mapping_, guard_bytes(), PROT_NONE);
#ifdef OPKIT_CPU_VALGRIND
  valgrind_stack_ = VALGRIND_STACK_REGISTER(mapping_ + guard_bytes(), mapping_ + mapping_bytes_);
#endif
}

Fiber::~Fiber() {
#ifdef OPKIT_CPU_VALGRIND
  VALGRIND_STACK_DEREGISTER(valgrind_stack_);
#endif
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
}

void Fiber::reset(void (*entry)(void*), void* arg) {
  Contexts* c = contexts_.get();
  c->entry = entry;
  c->arg = arg;
  unsigned char* stack_lo = mapping_ + guard_bytes();
#ifdef OPKIT_CPU_ASAN
  ASAN_UNPOISON_MEMORY_REGION(stack_lo, stack_bytes_);
#endif
#ifdef OPKIT_CPU_ASM_FIBERS
  // The frame opkit_cpu_switch_stack pops: r15..r12, rbx, rbp, then the return address.
  auto* sp = reinterpret_cast<std::uint64_t*>(stack_lo + stack_bytes_ - top_offset_);
  *--sp = 0;                                                        // end of the call chain
  *--sp = reinterpret_cast<std::uint64_t>(&opkit_cpu_fiber_start);  // "return" address
  *--sp = 0;                                                        // rbp
  *--sp = 0;                                                        // rbx
  *--sp = reinterpret_cast<std::uint64_t>(&fiber_main);             // r12
  *--sp = reinterpret_cast<std::uint64_t>(c);                       // r13
  *--sp = 0;                                                        // r14
  *--sp = 0;                                                        // r15
  c->fiber_sp = sp;
#else
  getcontext(&c->fiber);
  c->fiber.uc_stack.ss_sp = stack_lo;
  c->fiber.uc_stack.ss_size = stack_bytes_ - top_offset_;
  c->fiber.uc_link = nullptr;
  auto bits = reinterpret_cast<std::uintptr_t>(c);
  makecontext(&c->fiber, reinterpret_cast<void (*)()>(&ucontext_main), 2, static_cast<unsigned int>(bits >> 32),
              static_cast<unsigned int>(bits & 0xffffffffu));
#endif
}

void Fiber::resume() {
  Contexts* c = contexts_.get();
#ifdef OPKIT_CPU_ASAN
  __sanitizer_start_switch_fiber(&c->scheduler_fake_stack, mapping_ + guard_bytes(), stack_bytes_);
#endif
#ifdef OPKIT_CPU_ASM_FIBERS
  opkit_cpu_switch_stack(&c->scheduler_sp, c->fiber_sp);
#else
  swapcontext(&c->scheduler, &c->fiber);
#endif
#ifdef OPKIT_CPU_ASAN
  __sanitizer_finish_switch_fiber(c->scheduler_fake_stack, nullptr, nullptr);
#endif
}

void Fiber::suspend() {
  Contexts* c = contexts_.get();
#ifdef OPKIT_CPU_ASAN
  __sanitizer_start_switch_fiber(&c->fiber_fake_stack, c->scheduler_bottom, c->scheduler_size);
#endif
#ifdef OPKIT_CPU_ASM_FIBERS
  opkit_cpu_switch_stack(&c->fiber_sp, c->scheduler_sp);
#else
  swapcontext(&c->fiber, &c->scheduler);
#endif
#ifdef OPKIT_CPU_ASAN
  __sanitizer_finish_switch_fiber(c->fiber_fake_stack, &c->scheduler_bottom, &c->scheduler_size);
#endif
}

void Fiber::exit() {
  Contexts* c = contexts_.get();
#ifdef OPKIT_CPU_ASAN
  __sanitizer_start_switch_fiber(nullptr, c->scheduler_bottom, c->scheduler_size);
#endif
#ifdef OPKIT_CPU_ASM_FIBERS
  void* abandoned = nullptr;
  opkit_cpu_switch_stack(&abandoned, c->scheduler_sp);
#else
  setcontext(&c->scheduler);
#endif
  __builtin_unreachable();
}

bool Fiber::in_guard_page(const void* address) const {
  auto* p = static_cast<const unsigned char*>(address);
  return p >= mapping_ && p < mapping_ + guard_bytes();
}

}  // namespace opkit::cpu
