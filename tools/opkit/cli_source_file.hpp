// A kernel source file named on the command line, turned into a Program with the -D and -I
// options `opkit compile` and `opkit run` share.
#pragma once

#include <string>
#include <vector>

#include "opkit/program.hpp"

namespace CLI {
class App;
}

namespace opkit::cli {

struct SourceOptions {
  std::string file;
  std::vector<std::string> defines;  // NAME or NAME=VALUE
  std::vector<std::string> include_dirs;
};

// Registers -D NAME[=VAL] and -I DIR (each repeatable, one value per flag) on a subcommand.
void add_source_options(CLI::App& command, SourceOptions& options);

// Reads the file (Error(not_found) naming it when it cannot be read) into a Program named after
// it, so that compile logs say FILE(LINE). Its folder is an include directory, as with nvcc.
Program load_program(const SourceOptions& options);

}  // namespace opkit::cli
