// Streams a file through Sha256Hasher (OpenSSL) in 1 MiB reads.
#include "hash_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include "opkit/sha256_hasher.hpp"

namespace opkit::cli {
namespace {

constexpr std::size_t read_bytes = std::size_t{1} << 20;

// Closes what it opened; standard input stays open.
struct InputFile {
  int fd = -1;
  bool owned = false;
  ~InputFile() {
    if (owned && fd >= 0) ::close(fd);
  }
};

}  // namespace

FileDigest hash_file(const std::string& path, ops::HashAlgo algo) {
  InputFile in;
  if (path == "-") {
    in.fd = STDIN_FILENO;
  } else {
    in.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    in.owned = true;
    if (in.fd < 0) return {std::nullopt, std::generic_category().message(errno)};
  }
  Sha256Hasher hasher;
  std::vector<std::uint8_t> buffer(read_bytes);
  for (;;) {
    const ssize_t n = ::read(in.fd, buffer.data(), buffer.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return {std::nullopt, std::generic_category().message(errno)};
    }
    hasher.update(std::span(buffer.data(), static_cast<std::size_t>(n)));
  }
  Sha256Digest digest = hasher.finish();
  if (algo == ops::HashAlgo::sha256d) digest = hasher.digest(digest);
  return {digest, ""};
}

}  // namespace opkit::cli
