// `opkit mine --job FILE.json` (mine_job.cpp) and `opkit mine --pool stratum+tcp://HOST:PORT`
// (mine_pool.cpp): Stratum V1 work, every share of every header reported as mining.submit sends
// it (docs/stratum.md). cmd_mine.cpp parses the options and dispatches here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "opkit/ops/pow.hpp"

namespace opkit::cli {

struct StratumRun {
  std::string worker = "opkit";             // mining.submit's first param (--user)
  std::optional<std::string> extranonce2;   // --job: the first extranonce2 (hex); default zeros
  ops::NonceRange nonces{0, 0xffffffffu};   // searched in every header (--start, --count)
  std::optional<std::uint64_t> max_shares;  // --shares: stop after this many (--pool: accepted)
  std::optional<double> max_seconds;        // --seconds
  bool json = false, quiet = false;
};

struct PoolLogin {
  std::string url;  // stratum+tcp://HOST:PORT
  std::string password = "x";
  double timeout_seconds = 10;  // connect, and each answer the client waits for
  int retries = 10;             // reconnect attempts in a row before giving up
};

// Exit status: 0 a share found (or the limit reached), 1 none, 130 stopped by a signal.
int run_mine_job(const std::string& path, const StratumRun& run, ops::MineOptions options);
// Exit status: 0 stopped by --shares or --seconds, 130 by a signal; Error(unavailable/runtime)
// for an unreachable pool, one that refuses the login or sends what is not Stratum (exit 3).
int run_mine_pool(const PoolLogin& login, const StratumRun& run, ops::MineOptions options);

}  // namespace opkit::cli
