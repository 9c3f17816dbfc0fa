// Source file + -D/-I options -> opkit::Program, for `opkit compile` and `opkit run`.
#include "cli_source_file.hpp"

#include <CLI/CLI.hpp>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "opkit/error.hpp"

namespace opkit::cli {
namespace {

bool is_identifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

}  // namespace

void add_source_options(CLI::App& command, SourceOptions& options) {
  command.add_option("-D,--define", options.defines, "Define a macro for the kernel: -D NAME or -D NAME=VALUE")
      ->allow_extra_args(false);
  command.add_option("-I,--include-dir", options.include_dirs, "Add a directory to the #include search path")
      ->allow_extra_args(false);
}

Program load_program(const SourceOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(options.file, ec))
    throw Error(Errc::invalid_argument, "reading the kernel source", options.file + " is a directory, not a .cu file");
  std::ifstream in(options.file, std::ios::binary);
  if (!in)
    throw Error(Errc::not_found, "reading the kernel source",
                "cannot open " + options.file + ": " + std::generic_category().message(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(Errc::io, "reading the kernel source", "cannot read " + options.file);

  Program program(text.str());
  program.name(options.file);
  for (const auto& define : options.defines) {
    auto eq = define.find('=');
    std::string name = define.substr(0, eq);
    if (!is_identifier(name))
      throw Error(Errc::invalid_argument, "-D", "'" + define + "' is not NAME or NAME=VALUE (NAME a C identifier)");
    if (eq == std::string::npos)
      program.define(name);
    else
      program.define(name, define.substr(eq + 1));
  }
  fs::path folder = fs::path(options.file).parent_path();
  program.include_dir(folder.empty() ? "." : folder.string());
  for (const auto& dir : options.include_dirs) {
    if (!fs::is_directory(dir, ec)) throw Error(Errc::not_found, "-I", "include directory " + dir + " does not exist");
    program.include_dir(dir);
  }
  return program;
}

}  // namespace opkit::cli
