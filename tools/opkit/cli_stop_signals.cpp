// SIGINT / SIGTERM (/ SIGUSR1) -> an atomic flag (see cli_stop_signals.hpp).
#include "cli_stop_signals.hpp"

namespace opkit::cli {
namespace {

std::atomic<bool> stop_flag{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void on_stop_signal(int) {
  stop_flag.store(true);
}

}  // namespace

StopSignals::StopSignals(bool with_usr1) : installed_(with_usr1 ? 3 : 2) {
  stop_flag.store(false);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < installed_; ++i) sigaction(signals_[i], &action, &previous_[i]);
}

StopSignals::~StopSignals() {
  for (std::size_t i = 0; i < installed_; ++i) sigaction(signals_[i], &previous_[i], nullptr);
}

bool stop_requested() noexcept {
  return stop_flag.load();
}

const std::atomic<bool>& StopSignals::flag() const {
  return stop_flag;
}

}  // namespace opkit::cli
