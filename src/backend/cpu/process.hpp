// Running a program (the host compiler) with an argument vector, never through a shell, with its
// standard output and error captured together.
#pragma once

#include <string>
#include <vector>

namespace opkit::cpu {

struct ProcessResult {
  int exit_code = -1;  // -1 when the program was killed by a signal
  std::string output;  // stdout and stderr, interleaved as written
};

// argv[0] is the program's path. The child gets LC_ALL=C (messages the tests and users can read
// the same everywhere) and /dev/null as standard input. Throws Error(Errc::runtime) when the
// program cannot be started.
ProcessResult run_captured(const std::vector<std::string>& argv);

}  // namespace opkit::cpu
