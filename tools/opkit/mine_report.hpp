// What `opkit mine` prints: the progress line on a terminal, and the result as text or JSON.
#pragma once

#include <cstdint>
#include <functional>

#include "opkit/ops/pow.hpp"

namespace opkit::cli {

// A progress callback that redraws one stderr line (rate, % of range, ETA); clear_progress()
// erases it before the result is printed.
std::function<void(const ops::MineProgress&)> terminal_progress();
void clear_progress();

// Prints the result on stdout (and, when interrupted, how to resume on stderr).
void print_result(const ops::MineResult& result, const ops::NonceRange& range, bool json);

}  // namespace opkit::cli
