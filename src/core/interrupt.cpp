// InterruptCheck: a per-thread stack of stop predicates (see opkit/interrupt.hpp).
#include "opkit/interrupt.hpp"

#include <utility>

namespace opkit {
namespace {

thread_local InterruptCheck* t_innermost = nullptr;

}  // namespace

InterruptCheck::InterruptCheck(std::function<bool()> stop) : stop_(std::move(stop)), outer_(t_innermost) {
  t_innermost = this;
}

InterruptCheck::~InterruptCheck() {
  t_innermost = outer_;
}

bool interrupt_check_installed() noexcept {
  return t_innermost != nullptr;
}

bool interrupt_requested() noexcept {
  InterruptCheck* check = t_innermost;
  if (check == nullptr || !check->stop_) return false;
  try {
    return check->stop_();
  } catch (...) {  // a check that cannot say is taken as "stop": the caller is in trouble anyway
    return true;
  }
}

}  // namespace opkit
