// Line framing over a POSIX TCP socket (see tcp_lines.hpp).
#include "tcp_lines.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <system_error>

#include "opkit/error.hpp"

namespace opkit::cli {
namespace {

constexpr std::size_t max_line_bytes = std::size_t{64} << 10;

// std::strerror is not thread-safe; the pool client reads and writes on two threads.
std::string errno_text(int error) {
  return std::generic_category().message(error);
}

int milliseconds(double seconds) {
  return seconds <= 0 ? 0 : static_cast<int>(std::lround(seconds * 1000));
}

// A non-blocking connect that gives up after the timeout; returns the socket or -1 with `why`.
int connect_within(const addrinfo& address, double timeout_seconds, std::string& why) {
  const int fd = ::socket(address.ai_family, address.ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, address.ai_protocol);
  if (fd < 0) {
    why = errno_text(errno);
    return -1;
  }
  if (::connect(fd, address.ai_addr, address.ai_addrlen) != 0 && errno != EINPROGRESS) {
    why = errno_text(errno);
    ::close(fd);
    return -1;
  }
  pollfd p{fd, POLLOUT, 0};
  const int ready = ::poll(&p, 1, milliseconds(timeout_seconds));
  int error = 0;
  socklen_t size = sizeof error;
  if (ready == 0) {
    why = "timed out";
  } else if (ready < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0) {
    why = errno_text(errno);
  } else if (error != 0) {
    why = errno_text(error);
  } else {
    return fd;
  }
  ::close(fd);
  return -1;
}

}  // namespace

TcpLines::TcpLines(const std::string& host, std::uint16_t port, double timeout_seconds) {
  const std::string where = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  const int looked_up = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &addresses);
  if (looked_up != 0)
    throw Error(Errc::unavailable, "connect to " + where, std::string("cannot resolve: ") + gai_strerror(looked_up));
  std::string why = "no address";
  for (const addrinfo* a = addresses; a != nullptr && fd_ < 0; a = a->ai_next)
    fd_ = connect_within(*a, timeout_seconds, why);
  ::freeaddrinfo(addresses);
  if (fd_ < 0) throw Error(Errc::unavailable, "connect to " + where, "cannot connect: " + why);
}

TcpLines::~TcpLines() {
  if (fd_ >= 0) ::close(fd_);
}

TcpLines::Read TcpLines::read_line(std::string& line, double timeout_seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  for (;;) {
    if (const auto end = buffer_.find('\n'); end != std::string::npos) {
      line.assign(buffer_, 0, end > 0 && buffer_[end - 1] == '\r' ? end - 1 : end);
      buffer_.erase(0, end + 1);
      return Read::line;
    }
    if (buffer_.size() > max_line_bytes)
      throw Error(Errc::runtime, "stratum connection",
                  "the pool sent a line longer than 64 KiB without a newline: not Stratum (it begins '" +
                      buffer_.substr(0, 60) + "')");
    if (!closed_reason_.empty()) return Read::closed;
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, milliseconds(left));
    if (ready < 0 && errno != EINTR) {
      closed_reason_ = errno_text(errno);
      return Read::closed;
    }
    if (ready <= 0) {
      if (left <= 0) return Read::timeout;
      continue;  // a signal (Ctrl-C) or a rounding of the wait: look again
    }
    char piece[4096];
    const ssize_t n = ::recv(fd_, piece, sizeof piece, 0);
    if (n > 0) {
      buffer_.append(piece, static_cast<std::size_t>(n));
    } else if (n == 0) {
      closed_reason_ = "closed by the pool";
    } else if (errno != EINTR && errno != EAGAIN) {
      closed_reason_ = errno_text(errno);
    }
  }
}

bool TcpLines::write_line(std::string_view line) {
  if (!closed_reason_.empty()) return false;
  std::string out(line);
  out += '\n';
  std::size_t sent = 0;
  while (sent < out.size()) {
    const ssize_t n = ::send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EINTR)) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, 10000) > 0) continue;  // a Stratum line is small: 10 s of a full buffer is a dead pool
    }
    closed_reason_ = n < 0 ? errno_text(errno) : "send failed";
    return false;
  }
  return true;
}

}  // namespace opkit::cli
