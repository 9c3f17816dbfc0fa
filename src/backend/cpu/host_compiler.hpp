// The host C++ compiler the CPU backend builds kernels with, found at run time: $OPKIT_CXX, else
// c++, g++, clang++ on PATH.
#pragma once

#include <string>

namespace opkit::cpu {

struct HostCompiler {
  std::string path;            // absolute path of the executable
  std::string version_output;  // everything `<path> --version` printed
  std::string family;          // "g++", "clang++" or "c++" (unknown)
  std::string version;         // "12.2.0", or "" when not recognised
  bool is_gcc() const { return family == "g++"; }
  std::string description() const;  // "g++ 12.2.0 (/usr/bin/c++)"
};

// The compiler, looked up once per process (a failed lookup is retried on the next call).
// Throws Error(Errc::unavailable) saying where it looked when there is none.
const HostCompiler& host_compiler();

}  // namespace opkit::cpu
