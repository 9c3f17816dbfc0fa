// A TCP connection that carries lines of text (Stratum's JSON-RPC framing), on plain POSIX
// sockets, with a timeout on every wait: an unreachable or silent server never hangs the caller.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace opkit::cli {

class TcpLines {
 public:
  // Connects within `timeout_seconds` (each address of `host` in turn). Throws
  // Error(unavailable) naming host:port and the reason (refused, timed out, unknown host).
  TcpLines(const std::string& host, std::uint16_t port, double timeout_seconds);
  ~TcpLines();
  TcpLines(const TcpLines&) = delete;
  TcpLines& operator=(const TcpLines&) = delete;

  enum class Read { line, timeout, closed };
  // The next line (without its "\n" or "\r\n") within `timeout_seconds`. `closed` when the peer
  // closed the connection or it failed (closed_reason() says which); a line longer than 64 KiB is
  // not Stratum and throws Error(runtime).
  Read read_line(std::string& line, double timeout_seconds);
  // Sends `line` and "\n"; false (with closed_reason()) when the connection is gone.
  bool write_line(std::string_view line);
  const std::string& closed_reason() const { return closed_reason_; }

 private:
  int fd_ = -1;
  std::string buffer_;  // received, not yet returned
  std::string closed_reason_;
};

}  // namespace opkit::cli
