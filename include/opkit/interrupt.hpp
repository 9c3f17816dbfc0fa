// Interruptible waits, for programs that must answer Ctrl-C while opkit waits (the Python module,
// the CLI). While an InterruptCheck lives on a thread, opkit's blocking waits on that thread poll
// it every kInterruptPollInterval: a CPU-backend launch, a GPU stream, event or device
// synchronize, a synchronous copy or fill. When it says stop, the wait ends with
// Error(Errc::interrupted). A CPU-backend launch stops its kernel first (every worker thread
// leaves it; docs/cpu-backend.md, "Stopping a kernel"); a GPU kernel cannot be stopped from the
// host: it runs on, and the next wait for it waits again. Without a check, waits block as before.
#pragma once

#include <chrono>
#include <functional>

namespace opkit {

inline constexpr std::chrono::milliseconds kInterruptPollInterval{20};

class InterruptCheck {
 public:
  // `stop` is called on this thread, from inside opkit's waits; it returns true to stop. A `stop`
  // that throws counts as true. Checks nest: the innermost live one is asked.
  explicit InterruptCheck(std::function<bool()> stop);
  ~InterruptCheck();
  InterruptCheck(const InterruptCheck&) = delete;
  InterruptCheck& operator=(const InterruptCheck&) = delete;

 private:
  friend bool interrupt_requested() noexcept;
  std::function<bool()> stop_;
  InterruptCheck* outer_;
};

// For backends and anything else that waits: whether this thread has a live InterruptCheck (else
// a wait may block in the driver), and whether it asks to stop now (false without one).
bool interrupt_check_installed() noexcept;
bool interrupt_requested() noexcept;

}  // namespace opkit
