// `opkit mine`: proof-of-work search, Bitcoin headers (--header) or STRING || decimal(nonce)
// (--data), on every GPU by default, else every CPU core. Exit status: 0 found, 1 not found in
// the range, 2 bad input, 130 interrupted (after printing where to resume).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "cli_device.hpp"
#include "cli_mpi.hpp"
#include "cli_options.hpp"
#include "cli_stop_signals.hpp"
#include "commands.hpp"
#include "mine_report.hpp"
#include "mine_stratum.hpp"
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
  // Stratum work (mine_stratum.hpp): a job file or a pool.
  std::string job, pool, user, password = "x", extranonce2;
  std::optional<std::uint64_t> shares;
  std::optional<double> seconds;
  double timeout = 10;
  int retries = 10;
  // Whether --data was given at all: the empty STRING is a valid message.
  const CLI::Option* data_option = nullptr;
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

// --job / --pool: every share of every header, rather than the lowest nonce of one.
void run_stratum(const MineArgs& args, int& exit_code) {
  if (!args.job.empty() && !args.pool.empty())
    throw Error(Errc::invalid_argument, "opkit mine", "give one of --job FILE and --pool URL, not both");
  if (!args.header.empty() || args.data_option->count() > 0 || !args.target.empty() || args.difficulty != 0)
    throw Error(Errc::invalid_argument, "opkit mine",
                "--header, --data, --target and --difficulty are not for --job/--pool (the job gives the header, "
                "the pool or the job file the share target)");
  if (under_mpi()) throw Error(Errc::invalid_argument, "opkit mine", "--job and --pool do not run under mpirun");
  if (!args.pool.empty() && args.user.empty())
    throw Error(Errc::invalid_argument, "opkit mine --pool", "--pool needs --user NAME (the pool's worker name)");
  if (!args.pool.empty() && !args.extranonce2.empty())
    throw Error(Errc::invalid_argument, "opkit mine --pool", "--extranonce2 is for --job; the pool's job sets it");
  if (args.shares && *args.shares == 0)
    throw Error(Errc::invalid_argument, "opkit mine --shares", "--shares must be at least 1");
  if (args.seconds && !(*args.seconds > 0))
    throw Error(Errc::invalid_argument, "opkit mine --seconds", "--seconds must be > 0");
  if (!(args.timeout > 0) || args.timeout > 3600)
    throw Error(Errc::invalid_argument, "opkit mine --timeout", "--timeout must be in (0, 3600] seconds");
  if (args.retries < 0) throw Error(Errc::invalid_argument, "opkit mine --retries", "--retries must be >= 0");

  StratumRun run;
  if (!args.user.empty()) run.worker = args.user;
  if (!args.extranonce2.empty()) run.extranonce2 = args.extranonce2;
  // The range every header is searched over, checked as --header's would be (any target will do).
  ops::BitcoinJob range_check;
  range_check.target = ops::Target::from_leading_zero_bits(1);
  range_check.start = args.start.empty() ? 0 : parse_count(args.start, "--start");
  if (!args.count.empty()) range_check.count = parse_count(args.count, "--count");
  run.nonces = ops::nonce_range(range_check);
  run.max_shares = args.shares;
  run.max_seconds = args.seconds;
  run.json = args.json;
  run.quiet = args.quiet;
  const ops::MineOptions options = options_for(args.device);
  if (!args.job.empty()) {
    exit_code = run_mine_job(args.job, run, options);
  } else {
    exit_code = run_mine_pool({args.pool, args.password, args.timeout, args.retries}, run, options);
  }
  // As for a stopped search below: kernel compiles a stop left running must not delay the exit,
  // so the output is checked here rather than in main.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "opkit: write error\n");
    exit_code = std::max(exit_code, 1);
  }
  std::fflush(stderr);
  std::_Exit(exit_code);
}

void run_mine(const MineArgs& args, int& exit_code) {
  if (!args.job.empty() || !args.pool.empty()) return run_stratum(args, exit_code);
  const bool bitcoin = !args.header.empty();
  if (bitcoin == (args.data_option->count() > 0))
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
  StopSignals stop;
  options.stop = &stop.flag();
  const bool progress = !args.quiet && isatty(STDERR_FILENO);
  if (progress) options.progress = terminal_progress(bitcoin ? 0 : std::ldexp(1.0, args.difficulty));
  const ops::MineResult result = bitcoin ? ops::mine(bitcoin_job, options) : ops::mine(data_job, options);
  if (progress) clear_progress();
  print_result(result, range, args.json);
  exit_code = result.found ? 0 : (result.interrupted ? 130 : 1);
  if (stop.requested()) {
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
  args->data_option = allow_empty_value(command->add_option("--data", args->data, "STRING for data mode (any length)"));
  command->add_option("--difficulty", args->difficulty, "Data mode: leading zero bits of the hash, 1..255");
  command->add_option("--target", args->target, "Bitcoin mode: target as 64 hex digits (default: the header's nBits)");
  command->add_option("--start", args->start, "First nonce (default 0)");
  command->add_option("--count", args->count,
                      "Nonces to search (default: to the last nonce, 2^32 - 1 for Bitcoin, 2^64 - 1 for data)");
  command->add_option("--device", args->device,
                      "auto (every GPU, else the host), host (the native CPU miner), cuda (every GPU), cuda:N, cpu "
                      "(the kernel on the CPU backend), any registered backend's name[:N], or all (every GPU + host)");
  command->add_option("--job", args->job,
                      "Stratum V1 job file (mining.notify's fields, extranonce1/extranonce2_size, difficulty or "
                      "share_target): report every share of every header, as mining.submit would send it");
  command->add_option("--pool", args->pool, "Mine for a Stratum V1 pool: stratum+tcp://HOST:PORT (needs --user)");
  command->add_option("--user", args->user,
                      "--pool: worker name to authorize and submit as; --job: worker name printed");
  command->add_option("--password", args->password, "--pool: password for mining.authorize (default x)");
  command->add_option("--extranonce2", args->extranonce2, "--job: first extranonce2, hex (default zeros)");
  command->add_option("--shares", args->shares, "--job/--pool: stop after N shares (--pool: accepted ones)");
  command->add_option("--seconds", args->seconds, "--job/--pool: stop after T seconds");
  command->add_option("--timeout", args->timeout,
                      "--pool: seconds to wait to connect and for each answer (default 10)");
  command->add_option("--retries", args->retries,
                      "--pool: reconnect attempts in a row after a dropped connection before giving up (default 10)");
  command->add_flag("--json", args->json, "Print one JSON object (--job/--pool: JSON lines, one per share and event)");
  command->add_flag("--quiet", args->quiet, "No progress line on stderr");
  command->callback([args, &exit_code] { run_mine(*args, exit_code); });
}

}  // namespace opkit::cli
