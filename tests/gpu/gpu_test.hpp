// Shared helpers for GPU tests: skip (with the reason) when no CUDA GPU is usable.
#pragma once

#include <gtest/gtest.h>

#include "opkit/device.hpp"
#include "opkit/error.hpp"

namespace opkit::test {

// The first CUDA GPU, or nullopt with `reason` set.
inline std::optional<Device> gpu_or_reason(std::string& reason) {
  try {
    return Device::cuda(0);
  } catch (const Error& e) {
    reason = e.message();
    return std::nullopt;
  }
}

}  // namespace opkit::test

// Declares `opkit::Device gpu` in the test body, or skips the test saying why there is none.
#define OPKIT_SKIP_WITHOUT_GPU()                                          \
  std::string opkit_skip_reason_;                                         \
  auto opkit_gpu_ = ::opkit::test::gpu_or_reason(opkit_skip_reason_);     \
  if (!opkit_gpu_) GTEST_SKIP() << "no CUDA GPU: " << opkit_skip_reason_; \
  const ::opkit::Device& gpu = *opkit_gpu_;                               \
  (void)gpu
