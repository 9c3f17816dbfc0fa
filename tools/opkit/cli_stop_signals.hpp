// Stopping a long command cleanly. While a StopSignals lives, SIGINT (Ctrl-C) and SIGTERM (kill,
// and mpirun's forwarding of Ctrl-C) only set its flag; the command checks the flag between steps
// (the miner within a launch, ~0.1 s; `hash` between chunks), stops, and says how far it got.
// With `with_usr1`, SIGUSR1 does the same: `kill -USR1 <mpirun pid>` reaches every rank without
// ending the job. The previous handlers come back when it is destroyed.
#pragma once

#include <array>
#include <atomic>
#include <csignal>

namespace opkit::cli {

class StopSignals {
 public:
  explicit StopSignals(bool with_usr1 = false);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  const std::atomic<bool>& flag() const;
  bool requested() const { return flag().load(); }

 private:
  static constexpr std::array<int, 3> signals_{SIGINT, SIGTERM, SIGUSR1};
  std::array<struct sigaction, 3> previous_{};
  std::size_t installed_ = 0;
};

// Whether a stop was asked for since the innermost live StopSignals was made (false without one);
// for loops deep inside a command that have no StopSignals of their own to ask.
bool stop_requested() noexcept;

}  // namespace opkit::cli
