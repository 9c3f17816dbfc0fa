// NVRTC compile tests must run in CI (the toolkit is there, the GPU is not). Without NVRTC they
// skip, unless OPKIT_REQUIRE_NVRTC=1 (set by .ci/run) turns the skip into a failure.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

#include "opkit/nvrtc.hpp"

#define OPKIT_REQUIRE_NVRTC()                                                                   \
  do {                                                                                          \
    auto nvrtc_info_ = ::opkit::nvrtc::info();                                                  \
    if (!nvrtc_info_.available) {                                                               \
      const char* required_ = std::getenv("OPKIT_REQUIRE_NVRTC");                               \
      if (required_ != nullptr && std::string_view(required_) == "1")                           \
        FAIL() << "NVRTC is required here (OPKIT_REQUIRE_NVRTC=1) but: " << nvrtc_info_.reason; \
      GTEST_SKIP() << "NVRTC not available: " << nvrtc_info_.reason;                            \
    }                                                                                           \
  } while (0)
