// Kernel faults that arrive as signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL) on a worker thread end
// the launch with an error instead of the process; every other such signal goes to the handler
// that was installed before opkit's. Not installed in AddressSanitizer builds (ASan reports
// those faults itself) or when OPKIT_CPU_FAULT_HANDLERS=0.
#pragma once

#include <pthread.h>

namespace opkit::cpu {

// Once per process; later calls do nothing.
void install_fault_handlers();
// On each worker thread, so that a handler can run after a stack overflow.
void install_alternate_signal_stack();

// Stopping a launch (an interrupt): the signal that makes a worker thread leave kernel code which
// never reaches a barrier (`while (1) {}`). SIGURG, whose default action is to ignore it, so a
// stray one is harmless; ours are told apart by their sender and value, any other goes to the
// handler installed before. The handler is installed on the first stop (install_stop_handler:
// once per process, in every build, ASan included), never for a program that stops no launch.
void install_stop_handler();
// Asks `worker` to leave the kernel it runs, if its launch is being stopped (BlockRunner decides).
void signal_stop(pthread_t worker);

}  // namespace opkit::cpu
