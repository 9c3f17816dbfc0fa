// One connection to a Stratum V1 pool: mining.subscribe and mining.authorize, then the pool's
// messages turned into calls on the owner (difficulty, jobs, answers to submits), and the
// client's mining.submit. The reconnecting and the mining are the owner's (mine_pool.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "mine_events.hpp"
#include "opkit/ops/stratum.hpp"
#include "stratum_rpc.hpp"
#include "tcp_lines.hpp"

namespace opkit::cli {

struct PoolAddress {
  std::string host;
  std::uint16_t port = 0;
  std::string text() const { return host + ":" + std::to_string(port); }
};
// stratum+tcp://HOST:PORT (a trailing "/" allowed); Error(invalid_argument) saying what is wrong.
PoolAddress parse_pool_url(const std::string& url);

struct SessionCalls {
  std::function<void()> ready;  // subscribe and authorize answered: what follows is this session's
  std::function<void(double difficulty)> difficulty;                                // mining.set_difficulty
  std::function<void(const ops::StratumJob&, const ops::Extranonce&)> job;          // mining.notify
  std::function<void(std::uint64_t id, bool accepted, const std::string&)> answer;  // to mining.submit
  std::function<void(const std::string& event, const std::string& text)> note;      // messages, ignored methods
};

class StratumSession {
 public:
  // Connects (Error(unavailable) when it cannot) and sends mining.subscribe and mining.authorize.
  StratumSession(const PoolAddress& pool, const std::string& user, const std::string& password, double timeout_seconds,
                 SessionCalls calls);

  // Reads and handles what the pool sent, waiting up to `seconds` for the first line. False when
  // the connection is gone or a request went unanswered for the timeout (closed_reason() says
  // which); Error(runtime) quoting the line when the pool sent something that is not Stratum, and
  // when it refused mining.subscribe or mining.authorize.
  bool pump(double seconds);
  // Whether subscribe and authorize were both answered (jobs are passed on only from then on).
  bool ready() const { return extranonce_.has_value() && authorized_; }
  // Sends mining.submit; its id, or nullopt when the connection is gone.
  std::optional<std::uint64_t> submit(const FoundShare& share);
  const std::string& closed_reason() const { return closed_reason_; }

 private:
  void handle(const std::string& line);
  void handle_answer(const RpcMessage& m);
  void handle_method(const RpcMessage& m, const std::string& line);
  std::uint64_t send(const char* method, const nlohmann::json& params);

  PoolAddress pool_;
  std::string user_;
  double timeout_;
  SessionCalls calls_;
  TcpLines lines_;
  std::uint64_t next_id_ = 1;
  std::uint64_t subscribe_id_ = 0, authorize_id_ = 0;
  std::optional<ops::Extranonce> extranonce_;
  std::optional<ops::Extranonce> next_extranonce_;  // mining.set_extranonce: for the next job
  std::optional<ops::StratumJob> early_job_;        // a notify before the handshake finished
  bool authorized_ = false;
  struct Sent {
    std::chrono::steady_clock::time_point at;
    const char* method;
  };
  std::map<std::uint64_t, Sent> unanswered_;
  std::string closed_reason_;
};

}  // namespace opkit::cli
