// `opkit hash --check`: verifies sums files as `sha256sum -c` does, with its output, warnings
// and exit status.
#pragma once

#include <string>
#include <vector>

#include "opkit/ops/sha256.hpp"

namespace opkit::cli {

struct CheckOptions {
  ops::HashAlgo algo = ops::HashAlgo::sha256;
  bool quiet = false;   // no "OK" lines
  bool status = false;  // no output at all; the exit status says it
};

// Checks every line of every sums file ("-": standard input). Returns 0 when all listed files
// were read and matched, else 1.
int check_sums_files(const std::vector<std::string>& sums_files, const CheckOptions& options);

}  // namespace opkit::cli
