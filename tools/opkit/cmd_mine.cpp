// `opkit mine`: proof-of-work search, Bitcoin headers (--header) or STRING || decimal(nonce)
// (--data), on every GPU by default, else every CPU core. Exit status: 0 found, 1 not found in
// the range, 2 bad input, 130 interrupted (after printing where to resume).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "cli_device.hpp"
#include "cli_mpi.hpp"
#include "commands.hpp"
#include "mine_interrupt.hpp"
#include "mine_report.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/pow.hpp"
#include "opkit/registry.hpp"

namespace opkit::cli {
namespace {

struct MineArgs {
  std::string header, data, target, device = "auto";
  std::string start, count;
  int difficulty = 0;
  bool json = false, quiet = false;
};

// "cuda: <why it has no device>" for each GPU backend.
std::string gpu_reasons() {
  std::string reasons;
  for (const BackendStatus& b : backends())
    if (b.is_gpu) reasons += (reasons.empty() ? "" : "; ") + b.name + ": " + (b.available ? "available" : b.reason);
  return reasons.empty() ? "no GPU backend in this build" : reasons;
}

std::uint64_t parse_count(const std::string& text, const char* what) {
  const std::string stage = std::string("opkit mine ") + what;
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw Error(Errc::invalid_argument, stage, std::string(what) + " must be a decimal integer, got '" + text + "'");
  if (text.size() > 20 || (text.size() == 20 && text > "18446744073709551615"))
    throw Error(Errc::invalid_argument, stage, std::string(what) + " " + text + " does not fit in 64 bits");
  return std::stoull(text);
}

ops::MineOptions options_for(const std::string& device) {
  ops::MineOptions options;
  const DeviceRequest request = parse_device_option(device, "opkit mine", {.host = true, .all = true, .several = true});
  switch (request.kind) {
    case DeviceRequest::Kind::automatic:
      break;
    case DeviceRequest::Kind::host:
      options.cpu = true;
      break;
    case DeviceRequest::Kind::all:
      options.devices = ops::mine_support().gpus();
      if (options.devices.empty())
        throw Error(Errc::unavailable, "opkit mine --device all",
                    "no GPU to mine on (" + gpu_reasons() + "); --device host mines on the CPU alone");
      options.cpu = true;
      break;
    case DeviceRequest::Kind::devices:
      for (const Device& d : request.devices) ops::mine_support().require(d);
      options.devices = request.devices;
      break;
  }
  return options;
}

void run_mine(const MineArgs& args, int& exit_code) {
  const bool bitcoin = !args.header.empty();
  if (bitcoin == !args.data.empty())
    throw Error(Errc::invalid_argument, "opkit mine", "give exactly one of --header HEX and --data STRING");
  if (bitcoin && args.difficulty != 0)
    throw Error(Errc::invalid_argument, "opkit mine", "--difficulty is for --data; with --header use --target");
  if (!bitcoin && !args.target.empty())
    throw Error(Errc::invalid_argument, "opkit mine", "--target is for --header; with --data use --difficulty");
  if (!bitcoin && args.difficulty == 0)
    throw Error(Errc::invalid_argument, "opkit mine", "--data needs --difficulty BITS (1..255)");

  ops::BitcoinJob bitcoin_job;
  ops::DataJob data_job;
  const std::uint64_t start = args.start.empty() ? 0 : parse_count(args.start, "--start");
  std::optional<std::uint64_t> count;
  if (!args.count.empty()) count = parse_count(args.count, "--count");
  ops::NonceRange range;
  if (bitcoin) {
    bitcoin_job.header = ops::BlockHeader::from_hex(args.header);
    if (!args.target.empty()) bitcoin_job.target = ops::Target::from_hex(args.target);
    bitcoin_job.start = start;
    bitcoin_job.count = count;
    range = ops::nonce_range(bitcoin_job);  // validates before any device starts
  } else {
    data_job.data = args.data;
    data_job.difficulty_bits = args.difficulty;
    data_job.start = start;
    data_job.count = count;
    range = ops::nonce_range(data_job);
  }

  ops::MineOptions options = options_for(args.device);
  if (under_mpi()) {  // mpirun -np N opkit mine ...: the range over all ranks (cli_mpi.hpp)
    const MineOutput output{range, args.json, args.quiet};
    exit_code = bitcoin ? mine_over_ranks(bitcoin_job, options, output) : mine_over_ranks(data_job, options, output);
    return;
  }
  SigintFlag sigint;
  options.stop = &sigint.flag();
  const bool progress = !args.quiet && isatty(STDERR_FILENO);
  if (progress) options.progress = terminal_progress();
  const ops::MineResult result = bitcoin ? ops::mine(bitcoin_job, options) : ops::mine(data_job, options);
  if (progress) clear_progress();
  print_result(result, range, args.json);
  exit_code = result.found ? 0 : (result.interrupted ? 130 : 1);
  if (sigint.flag().load()) {
    // A stopped search leaves its kernel compiles running (a stop does not wait for NVRTC); a
    // normal exit would wait for them in the compile queue's destructor: leave at once instead.
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(exit_code);
  }
}

}  // namespace

void add_mine_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<MineArgs>();
  CLI::App* command = app.add_subcommand(
      "mine",
      "Proof-of-work search for the lowest qualifying nonce in [start, start + count).\n"
      "  Bitcoin: sha256d(80-byte header with the nonce) <= target (from the header's nBits, or --target).\n"
      "  Data:    sha256(STRING || decimal(nonce)) < 2^(256 - BITS).\n"
      "Exit status: 0 found, 1 not found in the range, 2 bad input, 130 interrupted (Ctrl-C).");
  command->add_option("--header", args->header, "80-byte block header as serialized, 160 hex digits (nonce ignored)");
  command->add_option("--data", args->data, "STRING for data mode (any length)");
  command->add_option("--difficulty", args->difficulty, "Data mode: leading zero bits of the hash, 1..255");
  command->add_option("--target", args->target, "Bitcoin mode: target as 64 hex digits (default: the header's nBits)");
  command->add_option("--start", args->start, "First nonce (default 0)");
  command->add_option("--count", args->count,
                      "Nonces to search (default: to the last nonce, 2^32 - 1 for Bitcoin, 2^64 - 1 for data)");
  command->add_option("--device", args->device,
                      "auto (every GPU, else the host), host (the native CPU miner), cuda (every GPU), cuda:N, cpu "
                      "(the kernel on the CPU backend), any registered backend's name[:N], or all (every GPU + host)");
  command->add_flag("--json", args->json, "Print one JSON object");
  command->add_flag("--quiet", args->quiet, "No progress line on stderr");
  command->callback([args, &exit_code] { run_mine(*args, exit_code); });
}

}  // namespace opkit::cli
