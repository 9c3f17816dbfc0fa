// The CPU backend's public face for backends that build on it (tests/backends/cpu_serial is one):
// a device of the CPU backend with its own limit on launch threads. The CPU backend compiles
// CUDA C++ with the host compiler and runs it through a shim (docs/cpu-backend.md).
#pragma once

#include <memory>

#include "opkit/backend.hpp"

namespace opkit::backend {

// A new CPU-backend device whose launches use at most `workers` threads (0: one per hardware
// thread; 1: the blocks of a launch run one after another on one thread). It reports the "cpu"
// backend; a backend that wraps it reports its own. Throws Error(unavailable) in a build without
// the CPU backend.
std::shared_ptr<Device> make_cpu_device(unsigned workers);

}  // namespace opkit::backend
