// SIGINT -> an atomic flag (see mine_interrupt.hpp).
#include "mine_interrupt.hpp"

namespace opkit::cli {
namespace {

std::atomic<bool> interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void on_sigint(int) {
  interrupted.store(true);
}

}  // namespace

SigintFlag::SigintFlag() {
  interrupted.store(false);
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous_);
}

SigintFlag::~SigintFlag() {
  sigaction(SIGINT, &previous_, nullptr);
}

const std::atomic<bool>& SigintFlag::flag() const {
  return interrupted;
}

}  // namespace opkit::cli
