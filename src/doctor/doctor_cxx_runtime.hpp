// `opkit doctor`'s check for two C++ runtimes in one process: opkit linked with a static copy of
// libstdc++ (some toolchains do that by accident) in a process where another library, PyTorch for
// one, has loaded the shared libstdc++.so.6. Locale-dependent code then crashes (null facets in
// number formatting and std::regex): the Python package's SIGSEGV after `import torch`.
#pragma once

#include <string>

#include "opkit/doctor.hpp"

namespace opkit::doctor::detail {

// Where the C++ runtime that opkit's own code calls lives, and the shared libstdc++ loaded in
// the process, if any ("" when none), as files (dladdr of std::locale::classic in each).
struct CxxRuntimes {
  std::string ours;
  std::string shared;
};
CxxRuntimes find_cxx_runtimes();

// The verdict on what find_cxx_runtimes() found: ok with one runtime (shared, or a static copy
// alone in the process), warn with two.
Check cxx_runtime_check(const CxxRuntimes& found);

}  // namespace opkit::doctor::detail
