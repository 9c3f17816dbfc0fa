// `opkit hash [--algo sha256|sha256d] [--device auto|host|DEVICE] [--check] [--lines] [FILE...]`:
// sha256sum-compatible digests of files (or, with --lines, of each line), and verification of
// sums files. Output, escaping, error lines and exit statuses follow coreutils' sha256sum.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_device.hpp"
#include "cli_json.hpp"
#include "cli_mpi.hpp"
#include "cli_stop_signals.hpp"
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
  bool strict = false, warn = false, ignore_missing = false, json = false;
  bool zero = false, tag = false, binary = false, text = false;
  std::size_t batch_mib = 64;
  std::vector<std::string> files;
};

// How a digest line is written, as sha256sum's -z, --tag and -b make it.
struct LineStyle {
  bool zero = false;    // end with NUL, names as they are
  bool tag = false;     // BSD: SHA256 (NAME) = HEX
  bool binary = false;  // GNU: HEX *NAME
  std::string tag_name;
};

void print_digest_line(const LineStyle& style, const std::string& file, const std::string& hex) {
  EscapedName name = style.zero ? EscapedName{file, false} : escape_digest_name(file);
  const char* prefix = name.escaped ? "\\" : "";
  if (style.tag)
    std::printf("%s%s (%s) = %s", prefix, style.tag_name.c_str(), name.text.c_str(), hex.c_str());
  else
    std::printf("%s%s %c%s", prefix, hex.c_str(), style.binary ? '*' : ' ', name.text.c_str());
  std::fputc(style.zero ? '\0' : '\n', stdout);
}

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

int hash_files(const std::vector<std::string>& files, ops::HashAlgo algo, const LineStyle& style, bool json) {
  int status = 0;
  std::size_t done = 0;
  nlohmann::json results = nlohmann::json::array();
  for (const std::string& file : files) {
    FileDigest result = hash_file(file, algo);
    if (stop_requested()) {
      std::fflush(stdout);
      std::fprintf(stderr, "opkit hash: interrupted; %zu of %zu files were hashed\n", done, files.size());
      return 130;
    }
    ++done;
    if (!result.digest) {
      std::fflush(stdout);
      std::fprintf(stderr, "opkit: %s: %s\n", quote_name(file).c_str(), result.error.c_str());
      if (json) results.push_back({{"file", file}, {"error", result.error}});
      status = 1;
      continue;
    }
    if (json)
      results.push_back({{"file", file}, {"digest", to_hex(*result.digest)}});
    else
      print_digest_line(style, file, to_hex(*result.digest));
  }
  if (json)
    std::printf("%s\n",
                json_text({{"algo", style.tag_name == "SHA256" ? "sha256" : "sha256d"}, {"files", results}}).c_str());
  return status;  // main() flushes stdout and reports a write error with its cause
}

void run(HashCommand& command, int& exit_code) {
  StopSignals stop;  // Ctrl-C / SIGTERM end the command between reads, saying how far it got
  const ops::HashAlgo algo = command.algo == "sha256d" ? ops::HashAlgo::sha256d : ops::HashAlgo::sha256;
  if (command.files.empty()) command.files.push_back("-");
  if (command.check && command.lines)
    throw Error(Errc::invalid_argument, "opkit hash", "--check and --lines do not go together");
  if ((command.quiet || command.status || command.strict || command.warn || command.ignore_missing) && !command.check)
    throw Error(Errc::invalid_argument, "opkit hash",
                "--quiet, --status, --strict, --warn and --ignore-missing are meaningful only with --check");
  if ((command.zero || command.tag || command.binary || command.text) && (command.check || command.lines))
    throw Error(Errc::invalid_argument, "opkit hash", "--zero, --tag, --binary and --text are for file digests");
  if (command.tag && command.text)
    throw Error(Errc::invalid_argument, "opkit hash", "--tag does not support --text mode");
  if (command.json && command.lines)
    throw Error(Errc::invalid_argument, "opkit hash",
                "--json is for file digests and --check; --lines output is one hex digest per line already");
  // Checked in every mode, so that a wrong value is an error (exit 2, or 3 for a device not
  // here) rather than ignored; file digests and --check then run on the host regardless.
  const ops::HashOptions where = device_options(command.device);
  if (command.check) {
    exit_code = check_sums_files(command.files, {.algo = algo,
                                                 .quiet = command.quiet,
                                                 .status = command.status,
                                                 .strict = command.strict,
                                                 .warn = command.warn,
                                                 .ignore_missing = command.ignore_missing,
                                                 .json = command.json});
    if (stop.requested()) exit_code = 130;
  } else if (command.lines) {
    if (command.batch_mib == 0) throw Error(Errc::invalid_argument, "--batch-mib", "must be at least 1");
    const LinesOptions options{
        .algo = algo, .where = where, .batch_bytes = command.batch_mib << 20, .timing = command.timing};
    // Under mpirun the lines are spread over all ranks (cli_mpi.hpp).
    exit_code = under_mpi() ? hash_lines_over_ranks(command.files, options) : hash_lines(command.files, options);
  } else {
    const LineStyle style{.zero = command.zero,
                          .tag = command.tag,
                          .binary = command.binary && !command.text,
                          .tag_name = algo == ops::HashAlgo::sha256 ? "SHA256" : "SHA256D"};
    exit_code = hash_files(command.files, algo, style, command.json);
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
  sub->add_flag("--strict", command->strict, "with --check: exit non-zero for improperly formatted lines");
  sub->add_flag("-w,--warn", command->warn, "with --check: warn about improperly formatted lines");
  sub->add_flag("--ignore-missing", command->ignore_missing, "with --check: don't fail or report for missing files");
  sub->add_flag("-z,--zero", command->zero, "end each digest line with NUL, not newline, and do not escape names");
  sub->add_flag("--tag", command->tag, "BSD-style digest lines: SHA256 (FILE) = HEX");
  sub->add_flag("-b,--binary", command->binary,
                "read in binary mode (as on Linux, the same bytes); mark lines with '*'");
  sub->add_flag("-t,--text", command->text, "read in text mode (the default; on Linux the same bytes)");
  sub->add_flag("--json", command->json, "one JSON object: the digest or error of each file, or each check result");
  sub->add_option("--batch-mib", command->batch_mib, "with --lines: memory per batch in MiB, 1..4096 (default 64)")
      ->check(CLI::Range(1, 4096));
  sub->add_flag("--timing", command->timing, "with --lines: report on stderr where the time went");
  sub->add_option("FILE", command->files, "files to hash; - or none: standard input");
  sub->callback([command, &exit_code] { run(*command, exit_code); });
}

}  // namespace opkit::cli
