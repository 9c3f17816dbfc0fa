// Ctrl-C for `opkit mine`: while a SigintFlag lives, SIGINT only sets its flag (the miner checks
// it between launches and stops within a launch, ~0.1 s); the previous handler comes back after.
#pragma once

#include <atomic>
#include <csignal>

namespace opkit::cli {

class SigintFlag {
 public:
  SigintFlag();
  ~SigintFlag();
  SigintFlag(const SigintFlag&) = delete;
  SigintFlag& operator=(const SigintFlag&) = delete;

  const std::atomic<bool>& flag() const;

 private:
  struct sigaction previous_ {};
};

}  // namespace opkit::cli
