// Calls into opkit that may wait for a long time (a kernel launch, a synchronize, a synchronous
// copy) run with the GIL released under an InterruptCheck that runs Python's signal handlers
// every few milliseconds, so that Ctrl-C raises KeyboardInterrupt there: the wait ends with
// Error(Errc::interrupted) (a CPU-backend kernel is stopped first; opkit/interrupt.hpp), which is
// replaced here by the exception the handler raised.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>
#include <type_traits>
#include <utility>

#include "opkit/error.hpp"
#include "opkit/interrupt.hpp"

namespace opkit::python {

// Call with the GIL held; `call` runs without it. Compiles go through here too: they poll nothing,
// but their failure during a Ctrl-C is reported as the KeyboardInterrupt.
template <class Call>
auto interruptible(Call&& call) -> decltype(call()) {
  namespace nb = nanobind;
  std::optional<nb::python_error> raised;
  InterruptCheck check([&] {
    nb::gil_scoped_acquire locked;
    if (PyErr_CheckSignals() == 0) return false;  // no signal, or a handler that did not raise
    raised.emplace();  // takes the exception (KeyboardInterrupt) off the thread until re-raised
    return true;
  });
  auto run = [&]() -> decltype(call()) {
    try {
      nb::gil_scoped_release unlocked;
      return call();
    } catch (const Error& e) {
      if (e.kind() == Errc::interrupted && raised) throw std::move(*raised);
      // A Ctrl-C at a terminal also reaches child processes (the CPU backend's host compiler),
      // whose failure it then explains: raise the KeyboardInterrupt, not that failure.
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
      throw;
    }
  };
  if constexpr (std::is_void_v<decltype(call())>) {
    run();
    if (raised) throw std::move(*raised);  // a handler raised just as the wait ended anyway
  } else {
    auto result = run();
    if (raised) throw std::move(*raised);
    return result;
  }
}

}  // namespace opkit::python
