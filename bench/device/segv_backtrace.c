// LD_PRELOAD helper for crash diagnosis on the GPU machine (no gdb there): on SIGSEGV/SIGBUS/
// SIGABRT it prints the faulting address, a native backtrace (library + offset, resolvable later
// with addr2line) and the process's executable mappings, then dies of the same signal.
//   cc -shared -fPIC -O1 -o /tmp/segv_backtrace.so bench/device/segv_backtrace.c
//   LD_PRELOAD=/tmp/segv_backtrace.so python3 script.py
#define _GNU_SOURCE
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_fault(int sig, siginfo_t* info, void* context) {
  (void)context;
  char line[160];
  int len = snprintf(line, sizeof line, "\n[segv_backtrace] signal %d at address %p, thread %d\n", sig, info->si_addr,
                     (int)gettid());
  if (write(2, line, (size_t)len) < 0) return;
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
  int maps = open("/proc/self/maps", O_RDONLY);
  if (maps >= 0) {
    if (write(2, "[segv_backtrace] executable mappings:\n", 38) < 0) return;
    char buffer[4096];
    ssize_t n;
    while ((n = read(maps, buffer, sizeof buffer)) > 0 && write(2, buffer, (size_t)n) == n) {
    }
    close(maps);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

// Exported so that a process whose libraries replace the handler (PyTorch installs its own) can put
// it back: ctypes.CDLL("/tmp/segv_backtrace.so").segv_backtrace_install().
__attribute__((constructor)) void segv_backtrace_install(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &action, NULL);
  sigaction(SIGBUS, &action, NULL);
  sigaction(SIGABRT, &action, NULL);
}
