// The job file of `opkit mine --job FILE.json`: a Stratum V1 mining.notify's fields by name, the
// extranonce the pool's mining.subscribe gave, and the share target (docs/stratum.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "opkit/ops/stratum.hpp"

namespace opkit::cli {

struct JobFile {
  ops::StratumJob job;
  ops::Extranonce extranonce;
  ops::Target share_target;
  std::optional<double> difficulty;  // when the file gave "difficulty" rather than "share_target"
  // Seconds ntime may be rolled forward by once every extranonce2 was searched ("ntime_roll",
  // default 0: never). Pools accept an ntime up to about two hours ahead; the file says how far.
  std::uint32_t ntime_roll = 0;
};

// Reads and checks the file; Error(invalid_argument) naming the file and the field, or
// Error(not_found) when it cannot be opened.
JobFile read_job_file(const std::string& path);

}  // namespace opkit::cli
