// The library version; part of every kernel-cache key.
#pragma once

namespace opkit {
inline constexpr const char* version = "0.1.0";
}
