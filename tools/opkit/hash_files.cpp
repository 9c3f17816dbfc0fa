// Streams a file through OpenSSL's EVP SHA-256 in 1 MiB reads.
#include "hash_files.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <system_error>
#include <vector>

#include "opkit/error.hpp"

namespace opkit::cli {
namespace {

constexpr std::size_t read_bytes = std::size_t{1} << 20;

struct CtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const noexcept { EVP_MD_CTX_free(ctx); }
};

// Closes what it opened; standard input stays open.
struct InputFile {
  int fd = -1;
  bool owned = false;
  ~InputFile() {
    if (owned && fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string digest_hex(const ops::Sha256Digest& digest) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex(64, '0');
  for (std::size_t i = 0; i < digest.size(); ++i) {
    hex[2 * i] = digits[digest[i] >> 4];
    hex[2 * i + 1] = digits[digest[i] & 15];
  }
  return hex;
}

FileDigest hash_file(const std::string& path, ops::HashAlgo algo) {
  InputFile in;
  if (path == "-") {
    in.fd = STDIN_FILENO;
  } else {
    in.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    in.owned = true;
    if (in.fd < 0) return {std::nullopt, std::generic_category().message(errno)};
  }
  std::unique_ptr<EVP_MD_CTX, CtxDeleter> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex2(ctx.get(), EVP_sha256(), nullptr) != 1)
    throw Error(Errc::runtime, "EVP_DigestInit_ex2", "OpenSSL could not start a SHA-256 digest");
  std::vector<unsigned char> buffer(read_bytes);
  for (;;) {
    const ssize_t n = ::read(in.fd, buffer.data(), buffer.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return {std::nullopt, std::generic_category().message(errno)};
    }
    EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<std::size_t>(n));
  }
  ops::Sha256Digest digest{};
  unsigned int size = 0;
  EVP_DigestFinal_ex(ctx.get(), digest.data(), &size);
  if (algo == ops::HashAlgo::sha256d) digest = ops::sha256(digest);
  return {digest, ""};
}

}  // namespace opkit::cli
