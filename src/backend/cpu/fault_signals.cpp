// Fault signal handlers for kernel code (see fault_signals.hpp).
#include "fault_signals.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "block_runner.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define OPKIT_CPU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OPKIT_CPU_ASAN 1
#endif
#endif

namespace opkit::cpu {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
struct sigaction g_previous[sizeof kSignals / sizeof kSignals[0]];

void on_fault(int signal, siginfo_t* info, void* context) {
  // Does not return when the fault came from a kernel running on this thread.
  BlockRunner::leave_faulting_kernel(signal, info);
  for (std::size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    if (kSignals[i] != signal) continue;
    const struct sigaction& previous = g_previous[i];
    if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
      previous.sa_sigaction(signal, info, context);
    } else if (previous.sa_handler != SIG_IGN && previous.sa_handler != SIG_DFL) {
      previous.sa_handler(signal);
    } else {
      // Default action: restore it; a real fault repeats on return, a sent signal is re-raised.
      sigaction(signal, &previous, nullptr);
      if (info->si_code <= 0) raise(signal);
    }
    return;
  }
}

constexpr int kStopSignal = SIGURG;
int g_stop_token;  // its address is the value our stop signals carry
struct sigaction g_previous_stop;

// The instruction the signal interrupted; null where the machine's context layout is not known
// here (then only the cooperative stops work: barriers, thread and block boundaries).
const void* interrupted_pc(const void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  return reinterpret_cast<const void*>(uc->uc_mcontext.gregs[REG_RIP]);  // NOLINT(performance-no-int-to-ptr)
#elif defined(__aarch64__)
  return reinterpret_cast<const void*>(uc->uc_mcontext.pc);  // NOLINT(performance-no-int-to-ptr)
#else
  (void)uc;
  return nullptr;
#endif
}

void on_stop(int signal, siginfo_t* info, void* context) {
  if (info->si_code == SI_QUEUE && info->si_pid == getpid() && info->si_value.sival_ptr == &g_stop_token) {
    BlockRunner::leave_stopped_kernel(interrupted_pc(context));  // does not return when it left
    return;
  }
  const struct sigaction& previous = g_previous_stop;
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(signal, info, context);
  } else if (previous.sa_handler != SIG_IGN && previous.sa_handler != SIG_DFL) {
    previous.sa_handler(signal);
  }  // SIGURG's default action is to ignore it
}

}  // namespace

void install_stop_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_sigaction = &on_stop;
    // As for faults, the handler may leave by switching fibers, so nothing may stay blocked; a
    // system call the kernel made (printf's write) is restarted when the handler returns. It runs
    // on the interrupted stack (the fiber's, which AddressSanitizer knows as the current one),
    // not the alternate stack: leaving it is then a plain Fiber::exit(), as from __trap().
    action.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(kStopSignal, &action, &g_previous_stop);
  });
}

void signal_stop(pthread_t worker) {
  union sigval value;
  value.sival_ptr = &g_stop_token;
  pthread_sigqueue(worker, kStopSignal, value);
}

void install_fault_handlers() {
#ifndef OPKIT_CPU_ASAN
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("OPKIT_CPU_FAULT_HANDLERS");
    if (env != nullptr && std::strcmp(env, "0") == 0) return;
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_sigaction = &on_fault;
    // On the alternate stack (a stack overflow), and not blocked while handled: the handler
    // leaves by switching fibers, never by returning, so the mask must already be right.
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i)
      sigaction(kSignals[i], &action, &g_previous[i]);
  });
#endif
}

void install_alternate_signal_stack() {
  constexpr std::size_t kBytes = 64 * 1024;
  void* memory = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return;  // faults are still caught, only a stack overflow is not
  stack_t stack;
  stack.ss_sp = memory;
  stack.ss_size = kBytes;
  stack.ss_flags = 0;
  sigaltstack(&stack, nullptr);
}

}  // namespace opkit::cpu
