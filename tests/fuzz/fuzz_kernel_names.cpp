// libFuzzer target: the kernel-name scanner (opkit::find_kernel_names) on any source text. Every
// name it returns is a non-empty identifier (qualified names with '::' allowed).
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "opkit/program.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string source(reinterpret_cast<const char*>(data), size);
  for (const std::string& name : opkit::find_kernel_names(source)) {
    if (name.empty()) std::abort();
    for (char c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ':') std::abort();
  }
  return 0;
}
