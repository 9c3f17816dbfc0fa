// The `opkit` command-line tool. Turns every opkit::Error into one readable block on stderr and
// an exit status; the subcommands themselves live in cmd_*.cpp.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <system_error>
#include <thread>

#include "cli_options.hpp"
#include "commands.hpp"
#include "opkit/error.hpp"
#include "opkit/mpi.hpp"
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

// A word that is not an option, where a subcommand must stand, names no known subcommand: say so
// with the word (CLI11 would only say that a subcommand is required).
const char* unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return nullptr;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->check_name(argv[1])) return nullptr;
  return argv[1];
}

// A usage error in the project's own form: "opkit COMMAND: what is wrong" and where the help is
// (CLI11's own print has no prefix, so it did not look like the other errors). Help and --version
// (exit code 0) are CLI11's to print.
int usage_error(const CLI::App& app, const CLI::ParseError& e) {
  std::string command = "opkit";
  for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
    sub = sub->get_subcommands().front();
    command += " " + sub->get_name();
  }
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\nRun '%s --help' for more information.\n", command.c_str(), e.what(), command.c_str());
  return 2;
}

// Everything a command printed must reach its destination: a full disk or a closed stdout is an
// error (exit 1, as sha256sum says "write error"), not a silent success.
int finish_output(int exit_code) {
  errno = 0;
  if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return exit_code;
  // errno names the cause only when this flush failed; an earlier failed flush left just the flag.
  if (errno != 0)
    std::fprintf(stderr, "opkit: write error: %s\n", std::generic_category().message(errno).c_str());
  else
    std::fprintf(stderr, "opkit: write error\n");
  return exit_code > 1 ? exit_code : 1;
}

// Under mpirun every rank parses the same command line, so bad input is printed by rank 0 alone.
// The other ranks wait a moment before they exit: mpirun ends the job at the first non-zero exit,
// which must not kill rank 0 before its message is out.
bool leave_bad_input_to_rank_0() {
  if (opkit::mpi::launcher_rank() == 0) return false;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  return true;
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
  add_encrypt_command(app, exit_code);
  add_mine_command(app, exit_code);
  add_lz4_command(app, exit_code);
  reject_empty_values(app);
  if (const char* word = unknown_subcommand(app, argc, argv)) {
    std::fprintf(stderr, "opkit: '%s' is not an opkit command; run 'opkit --help' for the list\n", word);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return finish_output(app.exit(e));
    if (leave_bad_input_to_rank_0()) return 2;
    return finish_output(usage_error(app, e));
  } catch (const opkit::Error& e) {
    const int status = exit_status_for(e.kind());
    std::fflush(stdout);
    if (status != 2 || !leave_bad_input_to_rank_0()) std::fprintf(stderr, "%s\n", e.what());
    return finish_output(status);
  } catch (const std::bad_alloc&) {
    std::fflush(stdout);
    std::fprintf(stderr, "opkit: out of memory (the input or a size option is larger than this machine can hold)\n");
    return finish_output(3);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "opkit: %s\n", e.what());
    return finish_output(3);
  }
  return finish_output(exit_code);
}
