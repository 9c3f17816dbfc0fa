// The built-in backends. Their classes implement the public interface (opkit/backend.hpp); the
// registry (src/core/registry.cpp) creates them from this explicit list, compiled in as the build
// enables them (OPKIT_WITH_CUDA, OPKIT_WITH_CPU_BACKEND): static registration objects in a static
// library would be dropped by the linker.
#pragma once

#include <memory>

#include "opkit/backend.hpp"

namespace opkit::backend {

std::shared_ptr<Backend> make_cuda_backend();
std::shared_ptr<Backend> make_cpu_backend();

}  // namespace opkit::backend
