// `opkit lz4 [-z|-d|-t] [-c] [-f] [-k|--rm] [-1] [-B4..-B7] [-BX] [-BD] [--content-size]
// [--no-frame-crc] [--device D] [--max-size N] [--json] [IN [OUT] | -m FILE...]`: the `lz4`
// command's options where they overlap, on opkit's LZ4 operator. As `lz4`: one positional is the
// input (none, or "-", is stdin); a second is the output ("-": stdout); -m makes every positional
// an input. Default outputs: FILE.lz4, or FILE without .lz4 for -d; -c (or stdin) writes stdout.
// An existing output is refused without -f; each output is written to a temporary file and
// renamed into place. Data streams through in batches (--batch-mib, default
// 64): memory is bounded by the batch, not the file (lz4_stream.hpp).

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_device.hpp"
#include "cli_stop_signals.hpp"
#include "commands.hpp"
#include "lz4_stream.hpp"
#include "opkit/device.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/lz4.hpp"

namespace opkit::cli {
namespace {

struct Lz4Command {
  bool compress = false, decompress = false, test = false, to_stdout = false, force = false;
  bool keep = false, remove = false, level1 = false, content_size = false, no_frame_crc = false;
  bool json = false, quiet = false, multiple = false;
  std::vector<std::string> block_flags;  // "4".."7", "X", "D"
  std::string device = "host";
  std::size_t max_size = 0;  // 0: no limit
  std::size_t batch_mib = ops::lz4_stream_batch_bytes >> 20;
  std::vector<std::string> files;
};

// host: liblz4 on the CPU cores; a device (cpu:0 is the CPU backend): the operator's kernels
// there; auto: the first GPU with the kernels, else host.
std::optional<Device> pick_device(const std::string& text) {
  const DeviceRequest request = parse_device_option(text, "opkit lz4", {.host = true});
  switch (request.kind) {
    case DeviceRequest::Kind::host:
    case DeviceRequest::Kind::all:  // not a word of this command: parse_device_option refused it
      return std::nullopt;
    case DeviceRequest::Kind::automatic: {
      const std::vector<Device> gpus = ops::lz4_support().gpus();
      if (gpus.empty()) return std::nullopt;
      return gpus.front();
    }
    case DeviceRequest::Kind::devices:
      ops::lz4_support().require(request.devices.front());
      return request.devices.front();
  }
  return std::nullopt;
}

bool ends_with_lz4(const std::string& s) {
  return s.size() > 4 && s.compare(s.size() - 4, 4, ".lz4") == 0;
}

// `lz4 IN OUT`: without -m a second positional names the output, as the lz4 tool reads it (and
// a third is refused rather than ignored, as lz4 does with a warning).
std::optional<std::string> explicit_output(Lz4Command& cmd) {
  if (cmd.multiple || cmd.files.size() < 2) return std::nullopt;
  if (cmd.files.size() > 2)
    throw Error(Errc::invalid_argument, "opkit lz4",
                "more than two file names (IN OUT); give -m to process several inputs");
  if (cmd.to_stdout) throw Error(Errc::invalid_argument, "opkit lz4", "give -c or an output file name, not both");
  std::string output = cmd.files.back();
  cmd.files.pop_back();
  std::error_code ec;
  if (output != "-" && cmd.files.front() != "-" && std::filesystem::equivalent(cmd.files.front(), output, ec))
    throw Error(Errc::invalid_argument, "opkit lz4", output + " is both the input and the output");
  return output;
}

void run_lz4(Lz4Command& cmd, int& exit_code) {
  if (cmd.compress + cmd.decompress + cmd.test > 1)
    throw Error(Errc::invalid_argument, "opkit lz4", "choose one of -z, -d, -t");
  if (cmd.keep && cmd.remove) throw Error(Errc::invalid_argument, "opkit lz4", "-k and --rm contradict each other");
  ops::Lz4CompressOptions zopt;
  zopt.block_size = ops::Lz4BlockSize::mib4;  // as `lz4`
  zopt.content_size = cmd.content_size;
  zopt.content_checksum = !cmd.no_frame_crc;
  for (const std::string& b : cmd.block_flags) {
    if (b.size() == 1 && b[0] >= '4' && b[0] <= '7')
      zopt.block_size = static_cast<ops::Lz4BlockSize>(b[0] - '0');
    else if (b == "X")
      zopt.block_checksums = true;
    else if (b != "D" && b != "I")  // linked blocks: decoding only; opkit writes independent blocks
      throw Error(Errc::invalid_argument, "opkit lz4", "-B" + b + " is not -B4..-B7, -BX, -BD or -BI");
  }
  const std::optional<Device> device = pick_device(cmd.device);
  zopt.device = device;
  const std::optional<std::string> named_output = explicit_output(cmd);
  if (cmd.files.empty()) cmd.files.push_back("-");
  if (cmd.batch_mib == 0 || cmd.batch_mib > 4096) throw Error(Errc::invalid_argument, "--batch-mib", "must be 1..4096");
  const StopSignals stop;  // Ctrl-C / SIGTERM end the command between batches (lz4_stream.hpp)

  nlohmann::json report = nlohmann::json::array();
  for (const std::string& file : cmd.files) {
    const bool stdin_input = file == "-";
    const bool decode = cmd.decompress || cmd.test || (!cmd.compress && ends_with_lz4(file));
    std::string output;  // empty: stdout
    if (!cmd.test && named_output) {
      output = *named_output == "-" ? "" : *named_output;
      if (!output.empty() && !cmd.force && std::filesystem::exists(output))
        throw Error(Errc::invalid_argument, "opkit lz4", output + " already exists (use -f to overwrite)");
    } else if (!cmd.test && !cmd.to_stdout && !stdin_input) {
      if (!decode)
        output = file + ".lz4";
      else if (ends_with_lz4(file))
        output = file.substr(0, file.size() - 4);
      else
        throw Error(Errc::invalid_argument, "opkit lz4", file + ": cannot name the output (no .lz4 suffix); use -c");
      if (!cmd.force && std::filesystem::exists(output))
        throw Error(Errc::invalid_argument, "opkit lz4", output + " already exists (use -f to overwrite)");
    }
    const Lz4Job job{.input = file,
                     .output = cmd.test ? "" : (output.empty() ? "-" : output),
                     .batch_bytes = cmd.batch_mib << 20,
                     .progress = !cmd.json && !cmd.quiet && isatty(STDERR_FILENO) != 0};
    const auto t0 = std::chrono::steady_clock::now();
    Lz4Totals totals;
    if (decode) {
      ops::Lz4DecompressOptions dopt;
      dopt.device = device;
      // Memory is bounded by the batch whatever the frames say, so by default nothing else is.
      dopt.max_output = cmd.max_size != 0 ? cmd.max_size : std::numeric_limits<std::size_t>::max();
      try {
        totals = lz4_decompress_stream(job, dopt);
      } catch (const Error& e) {
        if (e.stage() != "lz4 frame") throw;
        throw Error(e.kind(), "opkit lz4", (stdin_input ? std::string("stdin") : file) + ": " + e.message());
      }
    } else {
      totals = lz4_compress_stream(job, zopt);
    }
    if (totals.interrupted) {
      std::fprintf(stderr, "opkit lz4: interrupted in %s after %llu bytes; %s\n", stdin_input ? "stdin" : file.c_str(),
                   static_cast<unsigned long long>(totals.in),
                   cmd.test         ? "not fully tested"
                   : output.empty() ? "stdout has what was written so far"
                                    : "its output was not written");
      exit_code = 130;
      return;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!cmd.test && !output.empty() && !stdin_input && cmd.remove) std::filesystem::remove(file);
    const std::uint64_t raw = decode ? totals.out : totals.in, packed = decode ? totals.in : totals.out;
    nlohmann::json entry = {{"file", file},
                            {"output", cmd.test ? "" : (output.empty() ? "-" : output)},
                            {"mode", cmd.test ? "test" : (decode ? "decompress" : "compress")},
                            {"bytes_in", totals.in},
                            {"bytes_out", totals.out},
                            {"ratio", packed ? static_cast<double>(raw) / static_cast<double>(packed) : 0.0},
                            {"seconds", seconds},
                            {"gbps", seconds > 0 ? static_cast<double>(raw) / seconds / 1e9 : 0.0}};
    report.push_back(entry);
    if (!cmd.json && !cmd.quiet && (!output.empty() || cmd.test))
      std::fprintf(stderr, "%s: %llu -> %llu bytes (ratio %.3f)%s\n", file.c_str(),
                   static_cast<unsigned long long>(totals.in), static_cast<unsigned long long>(totals.out),
                   entry["ratio"].get<double>(), cmd.test ? ", ok" : "");
  }
  if (cmd.json) std::printf("%s\n", report.dump(2).c_str());
  exit_code = 0;
}

}  // namespace

void add_lz4_command(CLI::App& app, int& exit_code) {
  auto cmd = std::make_shared<Lz4Command>();
  CLI::App* c = app.add_subcommand("lz4", "Compress or decompress .lz4 files (LZ4 Frame format, as the lz4 tool)");
  c->add_flag("-z,--compress", cmd->compress, "Compress (the default, except for FILE.lz4)");
  c->add_flag("-d,--decompress", cmd->decompress, "Decompress");
  c->add_flag("-t,--test", cmd->test, "Decompress and check, writing nothing");
  c->add_flag("-c,--stdout", cmd->to_stdout, "Write to stdout");
  c->add_flag("-f,--force", cmd->force, "Overwrite existing outputs");
  c->add_flag("-k,--keep", cmd->keep, "Keep the inputs (the default)");
  c->add_flag("--rm", cmd->remove, "Remove each input once its output is written");
  c->add_flag("-m,--multiple", cmd->multiple, "Every file name is an input (default: IN [OUT])");
  c->add_flag("-1,--fast", cmd->level1, "Level 1, the only level (LZ4's fast parse)");
  c->add_option_function<std::string>(
       "-B", [cmd](const std::string& value) { cmd->block_flags.push_back(value); },
       "-B4..-B7 block size 64 KiB..4 MiB (default -B7), -BX block checksums, -BD accepted (writes independent blocks)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->trigger_on_parse();
  c->add_flag("--content-size", cmd->content_size, "Write the content size into the frame header");
  c->add_flag("--no-frame-crc", cmd->no_frame_crc, "Write no content checksum");
  c->add_option("--device", cmd->device,
                "host (liblz4, default), auto, cpu[:0] (kernels on the CPU backend), cuda[:N]");
  c->add_option("--max-size", cmd->max_size, "Refuse to decompress more bytes per input (default: no limit)");
  c->add_option("--batch-mib", cmd->batch_mib,
                "Data per batch in MiB (default 64); memory stays within about 3 batches + 8 MiB");
  c->add_flag("--json", cmd->json, "Print one JSON array: per file bytes in/out, ratio, seconds, GB/s");
  c->add_flag("-q,--quiet", cmd->quiet, "No summary lines on stderr");
  c->add_option("files", cmd->files, "IN [OUT] (none or -: stdin/stdout), or with -m several inputs");
  c->callback([cmd, &exit_code] { run_lz4(*cmd, exit_code); });
}

}  // namespace opkit::cli
