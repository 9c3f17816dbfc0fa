// The --lines pipeline: reader (split into lines, newlines dropped) -> hasher (a variable-length
// batch on the GPU or the CPU) -> writer (hex lines). Bounded queues of two batches connect them.
#include "hash_lines.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "bounded_queue.hpp"
#include "hash_names.hpp"
#include "input_chunks.hpp"
#include "opkit/error.hpp"
#include "opkit/hex.hpp"

namespace opkit::cli {
namespace {

struct Batch {
  std::vector<std::uint8_t> data;      // the lines, newlines removed
  std::vector<std::uint64_t> offsets;  // line i is data[offsets[i], offsets[i + 1])
  std::vector<std::uint8_t> digests;
};

using BatchQueue = BoundedQueue<Batch>;

// Splits inputs into batches of whole lines of about batch_bytes input bytes.
class LineReader {
 public:
  LineReader(std::size_t batch_bytes, BatchQueue& out) : batch_bytes_(batch_bytes), out_(out) { start_batch(); }

  // Reads one input; false when it could not be read (the error line is printed).
  bool read_input(const std::string& path) {
    const ChunksEnd end =
        read_chunks(path, batch_bytes_, [&](const std::uint8_t* data, std::size_t size) { return add(data, size); });
    end_line_if_open();  // a last line without a newline is still a line
    return end != ChunksEnd::unreadable;
  }

  // Sends what is left; returns false if the pipeline was aborted.
  bool finish() {
    if (current_.offsets.size() > 1) return out_.push(std::move(current_));
    return true;
  }

 private:
  void start_batch() {
    current_ = Batch{};
    current_.data.reserve(batch_bytes_ + (batch_bytes_ >> 4));
    current_.offsets.push_back(0);
    line_open_ = false;
  }

  // Appends bytes, closing a line at each newline and sending full batches.
  bool add(const std::uint8_t* p, std::size_t n) {
    while (n > 0) {
      const auto* newline = static_cast<const std::uint8_t*>(std::memchr(p, '\n', n));
      const std::size_t take = newline != nullptr ? static_cast<std::size_t>(newline - p) : n;
      current_.data.insert(current_.data.end(), p, p + take);
      line_open_ = true;
      if (newline == nullptr) return true;
      current_.offsets.push_back(current_.data.size());
      line_open_ = false;
      p += take + 1;
      n -= take + 1;
      if (current_.data.size() >= batch_bytes_ && !send()) return false;
    }
    return true;
  }

  void end_line_if_open() {
    if (!line_open_) return;
    current_.offsets.push_back(current_.data.size());
    line_open_ = false;
  }

  // Sends the complete lines; an open line's bytes move to the next batch.
  bool send() {
    std::vector<std::uint8_t> partial(current_.data.begin() + static_cast<std::ptrdiff_t>(current_.offsets.back()),
                                      current_.data.end());
    const bool was_open = line_open_;
    current_.data.resize(current_.offsets.back());
    if (!out_.push(std::move(current_))) return false;
    start_batch();
    current_.data.assign(partial.begin(), partial.end());
    line_open_ = was_open;
    return true;
  }

  std::size_t batch_bytes_;
  BatchQueue& out_;
  Batch current_;
  bool line_open_ = false;
};

void write_digests(const Batch& batch, std::vector<char>& text) {
  const std::size_t count = batch.offsets.size() - 1;
  text.resize(count * 65);
  char* out = text.data();
  for (std::size_t i = 0; i < count; ++i) {
    out = write_hex(std::span(batch.digests).subspan(32 * i, 32), out);
    *out++ = '\n';
  }
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size())
    throw Error(Errc::io, "opkit hash --lines",
                std::string("writing the digests failed: ") + std::generic_category().message(errno));
}

// Seconds a stage spent working (not waiting on its queues).
class StageClock {
 public:
  template <class F>
  auto time(F&& work) {
    const auto start = std::chrono::steady_clock::now();
    struct Add {
      StageClock& clock;
      std::chrono::steady_clock::time_point start;
      ~Add() { clock.seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
    } add{*this, start};
    return work();
  }
  double seconds() const { return seconds_; }

 private:
  double seconds_ = 0;
};

}  // namespace

int hash_lines(const std::vector<std::string>& inputs, const LinesOptions& options) {
  BatchQueue to_hash(2), to_write(2);
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto fail = [&](const std::exception_ptr& e) {
    std::lock_guard lock(failure_mutex);
    if (!failure) failure = e;
    to_hash.abort();
    to_write.abort();
  };

  StageClock read_clock, hash_clock, write_clock;
  std::uint64_t lines = 0, bytes = 0;
  const auto wall_start = std::chrono::steady_clock::now();
  std::thread hasher([&] {
    try {
      while (auto batch = to_hash.pop()) {
        lines += batch->offsets.size() - 1;
        bytes += batch->data.size();
        batch->digests.resize((batch->offsets.size() - 1) * ops::sha256_digest_bytes);
        hash_clock.time([&] {
          if (options.algo == ops::HashAlgo::sha256)
            ops::sha256(batch->data, batch->offsets, batch->digests, options.where);
          else
            ops::sha256d(batch->data, batch->offsets, batch->digests, options.where);
        });
        batch->data = {};  // free the input before the writer holds the batch
        if (!to_write.push(std::move(*batch))) return;
      }
      to_write.close();
    } catch (...) {
      fail(std::current_exception());
    }
  });
  std::thread writer([&] {
    try {
      std::vector<char> text;
      while (auto batch = to_write.pop()) write_clock.time([&] { write_digests(*batch, text); });
    } catch (...) {
      fail(std::current_exception());
    }
  });

  bool all_read = true;
  try {
    LineReader reader(options.batch_bytes, to_hash);
    for (const std::string& input : inputs)
      all_read = read_clock.time([&] { return reader.read_input(input); }) && all_read;
    reader.finish();
  } catch (...) {
    fail(std::current_exception());
  }
  to_hash.close();
  hasher.join();
  writer.join();
  std::fflush(stdout);
  if (failure) std::rethrow_exception(failure);
  if (options.timing) {
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    // The reader's time includes waiting for a free slot when hashing or writing is slower.
    std::fprintf(stderr,
                 "opkit: --lines: %llu lines, %llu bytes in %.3f s (%.3g lines/s); busy time per stage: "
                 "read+split %.3f s (incl. back-pressure), hash %.3f s, format+write %.3f s\n",
                 static_cast<unsigned long long>(lines), static_cast<unsigned long long>(bytes), wall,
                 static_cast<double>(lines) / wall, read_clock.seconds(), hash_clock.seconds(), write_clock.seconds());
  }
  return all_read ? 0 : 1;
}

}  // namespace opkit::cli
