// The CPU backend's entry points beyond the registry: what `opkit doctor` shows.
#pragma once

#include <string>

namespace opkit::backend {

// "g++ 12.2.0 (/usr/bin/c++)", or "no host compiler: <why>". Never throws.
std::string cpu_compiler_description();

}  // namespace opkit::backend
