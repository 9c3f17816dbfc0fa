// One Stratum V1 connection (see stratum_session.hpp).
#include "stratum_session.hpp"

#include "cli_json.hpp"
#include "opkit/error.hpp"
#include "opkit/version.hpp"
#include "stratum_json.hpp"

namespace opkit::cli {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

PoolAddress parse_pool_url(const std::string& url) {
  const std::string scheme = "stratum+tcp://";
  const auto bad = [&](const std::string& why) {
    return Error(Errc::invalid_argument, "opkit mine --pool", "'" + url + "' " + why);
  };
  if (url.rfind(scheme, 0) != 0) throw bad("is not a stratum+tcp://HOST:PORT URL");
  std::string rest = url.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) throw bad("needs HOST:PORT after stratum+tcp://");
  PoolAddress out;
  out.host = rest.substr(0, colon);
  if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']')  // [::1]
    out.host = out.host.substr(1, out.host.size() - 2);
  const std::string port = rest.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) == 0 || std::stoul(port) > 65535)
    throw bad("has no valid port (1..65535)");
  out.port = static_cast<std::uint16_t>(std::stoul(port));
  return out;
}

StratumSession::StratumSession(const PoolAddress& pool, const std::string& user, const std::string& password,
                               double timeout_seconds, SessionCalls calls)
    : pool_(pool),
      user_(user),
      timeout_(timeout_seconds),
      calls_(std::move(calls)),
      lines_(pool.host, pool.port, timeout_seconds) {
  subscribe_id_ = send("mining.subscribe", {std::string("opkit/") + opkit::version});
  authorize_id_ = send("mining.authorize", {user, password});
}

std::uint64_t StratumSession::send(const char* method, const nlohmann::json& params) {
  const std::uint64_t id = next_id_++;
  if (lines_.write_line(rpc_request(id, method, params))) unanswered_[id] = {Clock::now(), method};
  return id;
}

std::optional<std::uint64_t> StratumSession::submit(const FoundShare& share) {
  if (!closed_reason_.empty()) return std::nullopt;
  const std::uint64_t id = send("mining.submit", share.submit_params());
  if (!lines_.closed_reason().empty()) {
    closed_reason_ = lines_.closed_reason();
    return std::nullopt;
  }
  return id;
}

bool StratumSession::pump(double seconds) {
  if (!closed_reason_.empty()) return false;
  std::string line;
  for (double wait = seconds;; wait = 0) {
    const TcpLines::Read read = lines_.read_line(line, wait);
    if (read == TcpLines::Read::closed) {
      closed_reason_ = lines_.closed_reason();
      return false;
    }
    if (read == TcpLines::Read::timeout) break;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;  // keep-alive blank lines
    handle(line);
    if (!closed_reason_.empty()) return false;
  }
  if (!unanswered_.empty()) {
    const auto& [id, sent] = *unanswered_.begin();
    if (std::chrono::duration<double>(Clock::now() - sent.at).count() > timeout_) {
      closed_reason_ = std::string(sent.method) + " (request " + std::to_string(id) + ") unanswered for " +
                       std::to_string(static_cast<int>(timeout_)) + " s";
      return false;
    }
  }
  return true;
}

// The decoders' errors are bad input from the pool: a runtime failure of this session, quoting
// the line that carried it.
void StratumSession::handle(const std::string& line) {
  try {
    const RpcMessage m = parse_rpc_line(line);
    if (m.is_answer()) {
      handle_answer(m);
    } else {
      handle_method(m, line);
    }
  } catch (const Error& e) {
    if (e.stage().rfind("pool ", 0) == 0) throw;  // says which pool already
    throw Error(Errc::runtime, "pool " + pool_.text(),
                e.message() + (e.kind() == Errc::invalid_argument ? ", in " + quoted_line(line) : ""));
  }
}

void StratumSession::handle_answer(const RpcMessage& m) {
  if (!m.id.is_number_unsigned()) {
    calls_.note("ignored", "an answer with an id opkit never sent: " + json_text(m.id));
    return;
  }
  const auto id = m.id.get<std::uint64_t>();
  if (unanswered_.erase(id) == 0) {
    calls_.note("ignored", "an answer to request " + std::to_string(id) + ", which is not waiting for one");
    return;
  }
  const bool ok = m.error.is_null() && !m.result.is_null() && m.result != false;
  if (id == subscribe_id_) {
    if (!ok || !m.result.is_array() || m.result.size() < 3)
      throw Error(Errc::runtime, "pool " + pool_.text(),
                  "mining.subscribe was refused or answered oddly: " +
                      (m.error.is_null() ? json_text(m.result) : rpc_error_text(m.error)));
    extranonce_ = extranonce_from(m.result[1], m.result[2], "mining.subscribe result[1] (extranonce1)",
                                  "mining.subscribe result[2] (extranonce2_size)");
  } else if (id == authorize_id_) {
    if (!ok || m.result != true)
      throw Error(
          Errc::runtime, "pool " + pool_.text(),
          "the pool refused worker '" + user_ + "': " +
              (m.error.is_null() ? "mining.authorize answered " + json_text(m.result) : rpc_error_text(m.error)));
    authorized_ = true;
  } else {
    calls_.answer(id, ok && m.result == true, ok ? "" : (m.error.is_null() ? "result false" : rpc_error_text(m.error)));
    return;
  }
  if (!ready()) return;
  calls_.ready();
  if (early_job_) {
    calls_.job(*early_job_, *extranonce_);
    early_job_.reset();
  }
}

void StratumSession::handle_method(const RpcMessage& m, const std::string& line) {
  if (m.method == "mining.notify") {
    ops::StratumJob job = job_from_notify(m.params);
    if (next_extranonce_) {
      extranonce_ = next_extranonce_;
      next_extranonce_.reset();
      job.clean_jobs = true;  // a new extranonce1 makes every earlier share invalid
    }
    if (ready()) {
      calls_.job(job, *extranonce_);
    } else {
      early_job_ = std::move(job);
    }
  } else if (m.method == "mining.set_difficulty") {
    if (!m.params.is_array() || m.params.empty())
      throw Error(Errc::invalid_argument, "stratum message", "mining.set_difficulty needs [difficulty]");
    calls_.difficulty(difficulty_from(m.params[0], "mining.set_difficulty params[0]"));
  } else if (m.method == "mining.set_extranonce") {
    if (!m.params.is_array() || m.params.size() < 2)
      throw Error(Errc::invalid_argument, "stratum message", "mining.set_extranonce needs [extranonce1, size]");
    next_extranonce_ =
        extranonce_from(m.params[0], m.params[1], "mining.set_extranonce params[0]", "mining.set_extranonce params[1]");
  } else if (m.method == "client.reconnect") {
    closed_reason_ = "the pool asked to reconnect (client.reconnect)";
  } else if (m.method == "client.get_version") {
    lines_.write_line(rpc_answer(m.id, std::string("opkit/") + opkit::version, nullptr));
  } else if (m.method == "client.show_message") {
    calls_.note("message", "the pool says: " + (m.params.is_array() && !m.params.empty() && m.params[0].is_string()
                                                    ? m.params[0].get<std::string>()
                                                    : json_text(m.params)));
  } else {
    calls_.note("ignored", "a method opkit does not know: " + quoted_line(line));
    if (!m.id.is_null()) lines_.write_line(rpc_answer(m.id, nullptr, {20, "unsupported method", nullptr}));
  }
}

}  // namespace opkit::cli
