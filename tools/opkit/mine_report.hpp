// What `opkit mine` prints: the progress line on a terminal, and the result as text or JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "cli_progress.hpp"
#include "opkit/ops/pow.hpp"

namespace opkit::cli {

// A progress callback that redraws one stderr line; clear_progress() erases it before the result
// is printed. For a range that can be searched to its end: rate, % of range, ETA. For a range too
// large for that (data mode's 2^64) the percentage means nothing: rate, nonces tried and, given
// `hashes_per_find` (2^BITS in data mode; 0 if unknown), the expected time to a find.
std::function<void(const ops::MineProgress&)> terminal_progress(double hashes_per_find = 0);

// "12.34 MH/s".
std::string rate_text(double hashes_per_second);

// Prints the result on stdout (and, when interrupted, how to resume on stderr).
void print_result(const ops::MineResult& result, const ops::NonceRange& range, bool json);

}  // namespace opkit::cli
