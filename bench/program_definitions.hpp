// Kernel builds the benchmarks time beside the library's own: "NAME=VALUE[,NAME=VALUE...]" from
// the command line as definitions of a program (lz4_bench --decoder-variant, cipher_bench
// --aead-variants).
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>

#include "opkit/program.hpp"

// Adds each NAME=VALUE of the comma-separated `definitions` to `program`; `flag` names the option
// in the error for one without '='.
inline void define_all(opkit::Program& program, const std::string& definitions, const char* flag) {
  for (std::size_t at = 0; at < definitions.size();) {
    const std::size_t comma = std::min(definitions.find(',', at), definitions.size());
    const std::string definition = definitions.substr(at, comma - at);
    const std::size_t eq = definition.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument(std::string(flag) + ": " + definition + " is not NAME=VALUE");
    program.define(definition.substr(0, eq), definition.substr(eq + 1));
    at = comma + 1;
  }
}
