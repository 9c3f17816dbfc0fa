// See cli_progress.hpp: carriage return and erase-line, so the line redraws in place.
#include "cli_progress.hpp"

#include <cstdio>

namespace opkit::cli {

void show_progress(const std::string& line) {
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
}

void clear_progress() {
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace opkit::cli
