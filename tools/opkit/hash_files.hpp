// Whole files as single messages: read in bounded memory and hashed as a stream (Sha256Hasher) on
// the CPU (one message's SHA-256 is sequential, so a GPU has nothing to add here).
#pragma once

#include <optional>
#include <string>

#include "opkit/ops/sha256.hpp"

namespace opkit::cli {

struct FileDigest {
  std::optional<Sha256Digest> digest;  // nullopt when the file could not be read
  std::string error;                   // strerror text then, e.g. "No such file or directory"
};

// Hashes the file at `path` ("-": standard input).
FileDigest hash_file(const std::string& path, ops::HashAlgo algo);

}  // namespace opkit::cli
