// What `opkit doctor` reports about NVRTC. Compiling for a named arch with no GPU is
// opkit::compile(program, Target::cuda("sm_90")) (opkit/target.hpp).
#pragma once

#include <string>
#include <vector>

namespace opkit::nvrtc {

struct Info {
  bool available = false;
  std::string reason;  // why not, when unavailable
  std::string path;    // the loaded library
  int major = 0, minor = 0;
  std::vector<int> archs;  // sm numbers NVRTC can emit cubins for
};

Info info();

}  // namespace opkit::nvrtc
