// The subcommands of the `opkit` CLI. Each lives in its own cmd_<name>.cpp (listed in
// CMakeLists.txt) and adds itself to the CLI11 app; main.cpp calls each add_<name>_command.
//
// Conventions every command follows:
// - The callback stores its exit status in `exit_code` (0 success; 1 "negative" result such as
//   a failed check or nothing found; 2 bad input).
// - Failures are thrown as opkit::Error; main.cpp prints them as one block to stderr and maps
//   the error kind to an exit status. Commands never call exit().
// - Machine-readable output (--json) goes to stdout as one JSON object; progress goes to
//   stderr, only when stderr is a terminal.
#pragma once

namespace CLI {
class App;
}

namespace opkit::cli {

void add_doctor_command(CLI::App& app, int& exit_code);
void add_devices_command(CLI::App& app, int& exit_code);
void add_compile_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);
void add_hash_command(CLI::App& app, int& exit_code);
void add_encrypt_command(CLI::App& app, int& exit_code);  // encrypt and decrypt
void add_mine_command(CLI::App& app, int& exit_code);
void add_lz4_command(CLI::App& app, int& exit_code);

}  // namespace opkit::cli
