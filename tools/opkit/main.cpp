// The `opkit` command-line tool. Turns every opkit::Error into one readable block on stderr and
// an exit status; the subcommands themselves live in cmd_*.cpp.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>

#include "commands.hpp"
#include "opkit/error.hpp"
#include "opkit/version.hpp"

namespace {

// Bad input is 2, as for a usage error; a kernel that does not compile is 1, as for any compiler.
// Commands whose "negative" answer is 1 (mine: not found; hash --check: mismatch) need other
// failures to stand out, so runtime failures are 3.
int exit_status_for(opkit::Errc kind) {
  switch (kind) {
    case opkit::Errc::invalid_argument:
    case opkit::Errc::not_found:
      return 2;
    case opkit::Errc::compile:
      return 1;
    case opkit::Errc::interrupted:
      return 130;
    default:
      return 3;
  }
}

}  // namespace

// Only setting up the commands can throw outside the try below (allocation, CLI11 misuse), and
// std::terminate reports that as well as anything could:
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  CLI::App app{"opkit: runtime-compiled GPU operators (SHA-256, proof-of-work) and a CUDA kernel toolkit"};
  app.set_version_flag("--version", std::string("opkit ") + opkit::version);
  app.require_subcommand(1);
  int exit_code = 0;
  using namespace opkit::cli;
  add_doctor_command(app, exit_code);
  add_devices_command(app, exit_code);
  add_compile_command(app, exit_code);
  add_run_command(app, exit_code);
  add_hash_command(app, exit_code);
  add_mine_command(app, exit_code);
  add_lz4_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int status = app.exit(e);
    return status == 0 ? 0 : 2;
  } catch (const opkit::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return exit_status_for(e.kind());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "opkit: %s\n", e.what());
    return 3;
  }
  return exit_code;
}
