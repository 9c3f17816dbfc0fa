// `opkit hash --lines`: every input line (without its newline) is one message; one hex digest per
// line on standard output, in input order. Reading, hashing and writing run in three threads
// with two batches in flight between them, so memory stays bounded and the slowest stage sets
// the pace.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "opkit/ops/sha256.hpp"

namespace opkit::cli {

struct LinesOptions {
  ops::HashAlgo algo = ops::HashAlgo::sha256;
  ops::HashOptions where;                           // the device (GPU, or host_cpu)
  std::size_t batch_bytes = std::size_t{64} << 20;  // input bytes per batch (a longer line gets its own)
  bool timing = false;                              // report on stderr where the time went (busy time of each stage)
};

// Hashes the lines of each input ("-": standard input) in turn; a file's last line needs no
// newline. Returns 0, or 1 when an input could not be read (reported as sha256sum does).
int hash_lines(const std::vector<std::string>& inputs, const LinesOptions& options);

}  // namespace opkit::cli
