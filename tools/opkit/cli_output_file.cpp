// See cli_output_file.hpp.
#include "cli_output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "opkit/error.hpp"

namespace opkit::cli {
namespace {

mode_t current_umask() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

}  // namespace

OutputFile::OutputFile(std::filesystem::path destination) : destination_(std::move(destination)) {
  if (destination_ == "-") {
    std::fflush(stdout);  // what the command printed through stdio goes first
    fd_ = STDOUT_FILENO;
    direct_ = stdout_ = true;
    return;
  }
  // A destination that exists and is not a regular file (/dev/stdout, a FIFO, a device) is written
  // in place: renaming a temporary over it would replace the device node itself.
  struct stat st {};
  if (::stat(destination_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    fd_ = ::open(destination_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) fail("cannot open", errno);
    direct_ = true;
    return;
  }
  std::filesystem::path folder = destination_.parent_path();
  if (folder.empty()) folder = ".";
  temporary_ = (folder / ("." + destination_.filename().string() + ".opkit-tmp.XXXXXX")).string();
  fd_ = ::mkstemp(temporary_.data());
  if (fd_ < 0) {
    const int err = errno;
    throw Error(Errc::io, "opkit",
                "cannot create a file in " + folder.string() + ": " + std::generic_category().message(err));
  }
  ::fchmod(fd_, 0666 & ~current_umask());
}

OutputFile::~OutputFile() {
  if (fd_ >= 0 && !stdout_) ::close(fd_);
  if (!committed_ && !direct_) ::unlink(temporary_.c_str());
}

void OutputFile::fail(const std::string& what, int err) {
  throw Error(Errc::io, "opkit", what + " " + destination_.string() + ": " + std::generic_category().message(err));
}

void OutputFile::write(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write", n < 0 ? errno : ENOSPC);
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
}

void OutputFile::commit() {
  if (stdout_) {
    committed_ = true;  // every write was checked; fd 1 stays open
    return;
  }
  if (direct_) {
    const int closed = ::close(fd_);
    fd_ = -1;
    committed_ = true;
    if (closed != 0) fail("cannot write", errno);
    return;
  }
  if (::fsync(fd_) != 0 && errno != EINVAL) fail("cannot write", errno);
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) fail("cannot write", errno);
  if (::rename(temporary_.c_str(), destination_.c_str()) != 0) fail("cannot create", errno);
  committed_ = true;
}

}  // namespace opkit::cli
