// Reading one `--lines` input (a file, or "-" for stdin) in chunks, with sha256sum's error line
// for an input that cannot be opened or read. Shared by the single-process and MPI pipelines.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>
#include <vector>

#include "hash_names.hpp"

namespace opkit::cli {

enum class ChunksEnd { finished, unreadable, stopped };

// Hands the input to `consume(data, size)` in chunks of at most `chunk_bytes`; consume returns
// false to stop early. An unreadable input is reported on stderr (after flushing stdout, so the
// line lands where sha256sum's would).
template <class Consume>
ChunksEnd read_chunks(const std::string& path, std::size_t chunk_bytes, Consume&& consume) {
  const auto report = [&](int err) {
    std::fflush(stdout);
    std::fprintf(stderr, "opkit: %s: %s\n", quote_name(path).c_str(), std::generic_category().message(err).c_str());
    return ChunksEnd::unreadable;
  };
  const int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return report(errno);
  std::vector<std::uint8_t> buffer(std::min<std::size_t>(chunk_bytes, std::size_t{4} << 20));
  ChunksEnd end = ChunksEnd::finished;
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      end = report(errno);
      break;
    }
    if (!consume(buffer.data(), static_cast<std::size_t>(n))) {
      end = ChunksEnd::stopped;
      break;
    }
  }
  if (fd != STDIN_FILENO) ::close(fd);
  return end;
}

}  // namespace opkit::cli
