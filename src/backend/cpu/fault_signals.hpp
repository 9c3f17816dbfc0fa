// Kernel faults that arrive as signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL) on a worker thread end
// the launch with an error instead of the process; every other such signal goes to the handler
// that was installed before opkit's. Not installed in AddressSanitizer builds (ASan reports
// those faults itself) or when OPKIT_CPU_FAULT_HANDLERS=0.
#pragma once

namespace opkit::cpu {

// Once per process; later calls do nothing.
void install_fault_handlers();
// On each worker thread, so that a handler can run after a stack overflow.
void install_alternate_signal_stack();

}  // namespace opkit::cpu
