// Access to kernel sources embedded at build time (cmake/Embed.cmake).
#pragma once

#include <string>
#include <string_view>

namespace opkit::detail {

// The embedded file with this logical name (e.g. "sha256/sha256_fixed.cu"), or an empty view.
std::string_view embedded_source(std::string_view name);

}  // namespace opkit::detail
