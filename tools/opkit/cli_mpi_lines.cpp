// `opkit hash --lines` over MPI ranks (see cli_mpi.hpp). On rank 0 a reader thread splits the
// inputs into batches of lines and a writer thread prints digests, while the main thread (the
// only one that talks MPI) sends each batch through mpi::BatchHasher; one batch waits on each
// side, so memory stays bounded. The other ranks only serve.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
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
#include "cli_mpi.hpp"
#include "hash_names.hpp"
#include "input_chunks.hpp"
#include "opkit/error.hpp"
#include "opkit/hex.hpp"
#include "opkit/mpi.hpp"

namespace opkit::cli {

#ifdef OPKIT_WITH_MPI

namespace {

struct LineBatch {
  std::vector<std::uint8_t> data;      // the lines, newlines removed
  std::vector<std::uint64_t> offsets;  // line i is data[offsets[i], offsets[i + 1])
  std::vector<std::uint8_t> digests;
};

// Lines per batch, whatever their bytes: bounds the digests and lengths sent between ranks.
constexpr std::size_t max_batch_lines = std::size_t{1} << 22;
// Bytes per batch: MPI counts are int.
constexpr std::size_t max_batch_bytes = std::size_t{1} << 30;

using LineBatchQueue = BoundedQueue<LineBatch>;

// Splits the inputs into batches of whole lines (a file's last line needs no newline). Unreadable
// inputs are reported as sha256sum reports them.
class LineSplitter {
 public:
  LineSplitter(std::size_t batch_bytes, LineBatchQueue& out) : batch_bytes_(batch_bytes), out_(out) { restart({}); }

  // False when the input could not be read (reported) or the queue was cancelled.
  bool read_input(const std::string& path) {
    const ChunksEnd end =
        read_chunks(path, batch_bytes_, [&](const std::uint8_t* data, std::size_t size) { return add(data, size); });
    if (current_.data.size() > current_.offsets.back()) current_.offsets.push_back(current_.data.size());
    return end == ChunksEnd::finished;
  }

  void finish() {
    if (current_.offsets.size() > 1) out_.push(std::move(current_));
    out_.close();
  }

 private:
  void restart(std::vector<std::uint8_t> open_line) {
    current_ = LineBatch{};
    current_.data = std::move(open_line);
    current_.offsets.push_back(0);
  }

  bool add(const std::uint8_t* p, std::size_t n) {
    while (n > 0) {
      const auto* newline = static_cast<const std::uint8_t*>(std::memchr(p, '\n', n));
      const std::size_t take = newline != nullptr ? static_cast<std::size_t>(newline - p) : n;
      current_.data.insert(current_.data.end(), p, p + take);
      if (newline == nullptr) return true;
      current_.offsets.push_back(current_.data.size());
      p += take + 1;
      n -= take + 1;
      if ((current_.data.size() >= batch_bytes_ || current_.offsets.size() > max_batch_lines) && !send()) return false;
    }
    return true;
  }

  // Sends the complete lines; the bytes of an open line start the next batch.
  bool send() {
    const auto end = static_cast<std::ptrdiff_t>(current_.offsets.back());
    std::vector<std::uint8_t> open_line(current_.data.begin() + end, current_.data.end());
    current_.data.resize(current_.offsets.back());
    if (!out_.push(std::move(current_))) return false;
    restart(std::move(open_line));
    return true;
  }

  std::size_t batch_bytes_;
  LineBatchQueue& out_;
  LineBatch current_;
};

void write_digests(const LineBatch& batch, std::vector<char>& text) {
  const std::size_t bytes = batch.digests.size();
  text.resize(bytes / 32 * 65);
  char* out = text.data();
  for (std::size_t i = 0; i < bytes / 32; ++i) {
    out = write_hex(std::span(batch.digests).subspan(32 * i, 32), out);
    *out++ = '\n';
  }
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size())
    throw Error(Errc::io, "opkit hash --lines",
                std::string("writing the digests failed: ") + std::generic_category().message(errno));
}

// Rank 0: reader thread -> this thread (MPI) -> writer thread.
int lead(const std::vector<std::string>& inputs, const LinesOptions& options, mpi::BatchHasher& hasher) {
  LineBatchQueue to_hash(1), to_write(1);
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto fail = [&](const std::exception_ptr& e) {
    std::lock_guard lock(failure_mutex);
    if (!failure) failure = e;
    to_hash.abort();
    to_write.abort();
  };
  bool all_read = true;
  std::thread reader([&] {
    try {
      LineSplitter splitter(std::clamp<std::size_t>(options.batch_bytes, 1, max_batch_bytes), to_hash);
      for (const std::string& input : inputs) all_read = splitter.read_input(input) && all_read;
      splitter.finish();
    } catch (...) {
      fail(std::current_exception());
    }
  });
  std::thread writer([&] {
    try {
      std::vector<char> text;
      while (auto batch = to_write.pop()) write_digests(*batch, text);
    } catch (...) {
      fail(std::current_exception());
    }
  });

  std::uint64_t lines = 0, bytes = 0;
  const auto started = std::chrono::steady_clock::now();
  try {
    while (auto batch = to_hash.pop()) {
      lines += batch->offsets.size() - 1;
      bytes += batch->data.size();
      batch->digests.resize((batch->offsets.size() - 1) * ops::sha256_digest_bytes);
      hasher.hash(batch->data, batch->offsets, batch->digests);
      batch->data = {};
      batch->offsets = {};
      if (!to_write.push(std::move(*batch))) break;
    }
    to_write.close();
  } catch (...) {
    fail(std::current_exception());
  }
  reader.join();
  writer.join();
  std::fflush(stdout);
  if (failure) std::rethrow_exception(failure);
  hasher.finish();
  if (options.timing) {
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::fprintf(stderr, "opkit: --lines over %d ranks: %llu lines, %llu bytes in %.3f s (%.3g lines/s)\n",
                 mpi::init().size, static_cast<unsigned long long>(lines), static_cast<unsigned long long>(bytes), wall,
                 static_cast<double>(lines) / wall);
  }
  return all_read ? 0 : 1;
}

}  // namespace

int hash_lines_over_ranks(const std::vector<std::string>& inputs, const LinesOptions& options) {
  try {
    mpi::BatchHasher hasher(options.algo, options.where);
    if (mpi::init().rank != 0) {
      hasher.serve();
      return 0;
    }
    return lead(inputs, options, hasher);
  } catch (...) {
    fail_rank();
  }
}

#else

int hash_lines_over_ranks(const std::vector<std::string>&, const LinesOptions&) {
  under_mpi();  // throws under a launcher, saying this build has no MPI
  throw Error(Errc::unavailable, "opkit hash --lines over ranks", "this opkit was built without MPI");
}

#endif

}  // namespace opkit::cli
