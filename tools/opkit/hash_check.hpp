// `opkit hash --check`: verifies sums files as `sha256sum -c` does, with its output, warnings
// and exit status, and its options --quiet, --status, --strict, --warn and --ignore-missing.
#pragma once

#include <string>
#include <vector>

#include "opkit/ops/sha256.hpp"

namespace opkit::cli {

struct CheckOptions {
  ops::HashAlgo algo = ops::HashAlgo::sha256;
  bool quiet = false;           // no "OK" lines
  bool status = false;          // no output at all; the exit status says it
  bool strict = false;          // an improperly formatted line fails the check
  bool warn = false;            // say which lines are improperly formatted
  bool ignore_missing = false;  // a listed file that does not exist is neither checked nor a failure
  bool json = false;            // one JSON object on stdout instead of the result lines
};

// Checks every line of every sums file ("-": standard input). Returns 0 when all listed files
// were read and matched, else 1; 130 when stopped by a signal.
int check_sums_files(const std::vector<std::string>& sums_files, const CheckOptions& options);

}  // namespace opkit::cli
