// `opkit hash [--algo sha256|sha256d] [--device auto|host|DEVICE] [--check] [--lines] [FILE...]`:
// sha256sum-compatible digests of files (or, with --lines, of each line), and verification of
// sums files. Output, escaping, error lines and exit statuses follow coreutils' sha256sum.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_device.hpp"
#include "cli_mpi.hpp"
#include "commands.hpp"
#include "hash_check.hpp"
#include "hash_files.hpp"
#include "hash_lines.hpp"
#include "hash_names.hpp"
#include "opkit/device.hpp"
#include "opkit/error.hpp"
#include "opkit/hex.hpp"
#include "opkit/ops/sha256.hpp"

namespace opkit::cli {
namespace {

struct HashCommand {
  std::string algo = "sha256";
  std::string device = "auto";
  bool check = false, lines = false, quiet = false, status = false, timing = false;
  std::size_t batch_mib = 64;
  std::vector<std::string> files;
};

ops::HashOptions device_options(const std::string& device) {
  ops::HashOptions options;
  const DeviceRequest request = parse_device_option(device, "opkit hash", {.host = true});
  if (request.kind == DeviceRequest::Kind::host) {
    options.host_cpu = true;
  } else if (request.kind == DeviceRequest::Kind::devices) {
    ops::sha256_support().require(request.devices.front());
    options.device = request.devices.front();
  }
  return options;
}

int hash_files(const std::vector<std::string>& files, ops::HashAlgo algo) {
  int status = 0;
  for (const std::string& file : files) {
    FileDigest result = hash_file(file, algo);
    if (!result.digest) {
      std::fflush(stdout);
      std::fprintf(stderr, "opkit: %s: %s\n", quote_name(file).c_str(), result.error.c_str());
      status = 1;
      continue;
    }
    EscapedName name = escape_digest_name(file);
    std::printf("%s%s  %s\n", name.escaped ? "\\" : "", to_hex(*result.digest).c_str(), name.text.c_str());
  }
  std::fflush(stdout);
  return status;
}

void run(HashCommand& command, int& exit_code) {
  const ops::HashAlgo algo = command.algo == "sha256d" ? ops::HashAlgo::sha256d : ops::HashAlgo::sha256;
  if (command.files.empty()) command.files.push_back("-");
  if (command.check && command.lines)
    throw Error(Errc::invalid_argument, "opkit hash", "--check and --lines do not go together");
  if ((command.quiet || command.status) && !command.check)
    throw Error(Errc::invalid_argument, "opkit hash", "--quiet and --status are meaningful only with --check");
  if (command.check) {
    exit_code = check_sums_files(command.files, {.algo = algo, .quiet = command.quiet, .status = command.status});
  } else if (command.lines) {
    if (command.batch_mib == 0) throw Error(Errc::invalid_argument, "--batch-mib", "must be at least 1");
    const LinesOptions options{.algo = algo,
                               .where = device_options(command.device),
                               .batch_bytes = command.batch_mib << 20,
                               .timing = command.timing};
    // Under mpirun the lines are spread over all ranks (cli_mpi.hpp).
    exit_code = under_mpi() ? hash_lines_over_ranks(command.files, options) : hash_lines(command.files, options);
  } else {
    exit_code = hash_files(command.files, algo);
  }
}

}  // namespace

void add_hash_command(CLI::App& app, int& exit_code) {
  auto command = std::make_shared<HashCommand>();
  CLI::App* sub = app.add_subcommand(
      "hash",
      "Print or check SHA-256 (or SHA-256d) digests, like sha256sum. With --lines, each input line is one message "
      "and the batch runs on the GPU.");
  sub->add_option("--algo", command->algo, "sha256 or sha256d (SHA-256 of SHA-256)")
      ->check(CLI::IsMember({"sha256", "sha256d"}));
  sub->add_option("--device", command->device,
                  "where --lines batches run: auto (a GPU if there is one, else the host), host (OpenSSL), cuda, "
                  "cuda:N, cpu (the kernel on the CPU backend) or any registered backend's name[:N]; whole files are "
                  "single streams and always hash on the host");
  sub->add_flag("-c,--check", command->check, "read digests from the FILEs (sums files) and check them");
  sub->add_flag("--lines", command->lines, "hash each line (without its newline) as a message; one digest per line");
  sub->add_flag("--quiet", command->quiet, "with --check: do not print OK for each verified file");
  sub->add_flag("--status", command->status, "with --check: print nothing; the exit status says it");
  sub->add_option("--batch-mib", command->batch_mib, "with --lines: input MiB per batch (default 64)");
  sub->add_flag("--timing", command->timing, "with --lines: report on stderr where the time went");
  sub->add_option("FILE", command->files, "files to hash; - or none: standard input");
  sub->callback([command, &exit_code] { run(*command, exit_code); });
}

}  // namespace opkit::cli
