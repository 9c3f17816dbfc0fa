// See lz4_stream.hpp. Memory: compression holds one batch of input, its frame bytes and the
// codec's slots (about 3 batches); decompression a window of one batch plus the partial block left
// from the last (at most 8 MiB + 8) and the decoder's room for one batch (about 3 batches too).
#include "lz4_stream.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "cli_input_file.hpp"
#include "cli_output_file.hpp"
#include "cli_progress.hpp"
#include "cli_stop_signals.hpp"

namespace opkit::cli {
namespace {

// The input's size when it is a regular file (for the content size field and the percentage).
std::optional<std::uint64_t> known_size(const std::string& path) {
  std::error_code ec;
  if (path == "-" || !std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return std::nullopt;
  return size;
}

// "FILE: 1234 MiB read (56%), 789 MiB written", redrawn at most five times a second.
class Progress {
 public:
  Progress(bool on, const std::string& name, std::optional<std::uint64_t> total)
      : on_(on), name_(name == "-" ? "stdin" : name), total_(total) {}
  ~Progress() {
    if (shown_) clear_progress();
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(const Lz4Totals& t) {
    const auto now = std::chrono::steady_clock::now();
    if (!on_ || (shown_ && now - last_ < std::chrono::milliseconds(200))) return;
    last_ = now;
    shown_ = true;
    std::string line = name_ + ": " + std::to_string(t.in >> 20) + " MiB read";
    if (total_ && *total_ > 0) line += " (" + std::to_string(t.in * 100 / *total_) + "%)";
    show_progress(line + ", " + std::to_string(t.out >> 20) + " MiB written");
  }

 private:
  bool on_;
  std::string name_;
  std::optional<std::uint64_t> total_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_;
};

// The output, or none for -t.
std::unique_ptr<OutputFile> open_output(const std::string& path) {
  return path.empty() ? nullptr : std::make_unique<OutputFile>(path);
}

}  // namespace

Lz4Totals lz4_compress_stream(const Lz4Job& job, ops::Lz4CompressOptions options) {
  const std::optional<std::uint64_t> size = known_size(job.input);
  options.content_size = options.content_size && size.has_value();
  InputFile input(job.input);
  const std::unique_ptr<OutputFile> output = open_output(job.output);
  ops::Lz4FrameWriter writer(options, size);
  // Whole blocks per batch, so that only the frame's last block is short (as `lz4` writes); no
  // more than a small file needs.
  const std::size_t block = writer.block_bytes();
  std::size_t piece_bytes = std::max(block, job.batch_bytes / block * block);
  if (size) piece_bytes = std::min<std::uint64_t>(piece_bytes, (*size / block + 1) * block);
  std::vector<std::uint8_t> piece(piece_bytes), frame;
  Progress progress(job.progress, job.input, size);
  Lz4Totals totals;
  for (;;) {
    const std::size_t n = input.read_full(piece);
    if (stop_requested()) return {totals.in, totals.out, true};
    writer.write(std::span<const std::uint8_t>(piece.data(), n), frame);
    if (n < piece.size()) writer.finish(frame);
    if (output) output->write(frame);
    totals.in += n;
    totals.out += frame.size();
    frame.clear();
    progress.update(totals);
    if (n < piece.size()) break;
  }
  if (output) output->commit();
  return totals;
}

Lz4Totals lz4_decompress_stream(const Lz4Job& job, const ops::Lz4DecompressOptions& options) {
  InputFile input(job.input);
  const std::unique_ptr<OutputFile> output = open_output(job.output);
  Lz4Totals totals;
  ops::Lz4StreamDecoder decoder(
      options,
      [&](std::span<const std::uint8_t> bytes) {
        if (output) output->write(bytes);
        totals.out += bytes.size();
      },
      job.batch_bytes);
  const std::optional<std::uint64_t> size = known_size(job.input);
  Progress progress(job.progress, job.input, size);
  const std::size_t read_bytes = size ? std::min<std::uint64_t>(job.batch_bytes, *size + 1) : job.batch_bytes;
  std::vector<std::uint8_t> window;  // what the decoder left of the last read (a partial block), then the next read
  for (;;) {
    const std::size_t kept = window.size();
    window.resize(kept + read_bytes);
    const std::size_t n = input.read_full(std::span<std::uint8_t>(window.data() + kept, read_bytes));
    if (stop_requested()) return {totals.in, totals.out, true};
    window.resize(kept + n);
    totals.in += n;
    const bool last = n < read_bytes;
    const std::size_t done = decoder.decode(window, last);
    window.erase(window.begin(), window.begin() + static_cast<std::ptrdiff_t>(done));
    progress.update(totals);
    if (last) break;
  }
  if (output) output->commit();
  return totals;
}

}  // namespace opkit::cli
