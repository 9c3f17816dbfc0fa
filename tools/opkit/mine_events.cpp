// Share and status lines for `opkit mine --job/--pool` (see mine_events.hpp).
#include "mine_events.hpp"

#include <cstdio>

#include "cli_json.hpp"
#include "opkit/hex.hpp"
#include "opkit/ops/stratum.hpp"

namespace opkit::cli {

nlohmann::json FoundShare::submit_params() const {
  return nlohmann::json::array({worker, job_id, extranonce2, ntime, nonce});
}

FoundShare found_share(const std::string& worker, const std::string& job_id, std::span<const std::uint8_t> extranonce2,
                       std::uint32_t ntime, std::uint32_t nonce, const Sha256Digest& digest) {
  return {worker,
          job_id,
          to_hex(extranonce2),
          ops::stratum_hex32(ntime),
          ops::stratum_hex32(nonce),
          ops::bitcoin_hash_hex(digest)};
}

void MiningEvents::share(const FoundShare& share, const nlohmann::json& more) {
  std::lock_guard lock(mutex_);
  if (json_) {
    nlohmann::json line = {
        {"event", "share"},     {"worker", share.worker}, {"job_id", share.job_id}, {"extranonce2", share.extranonce2},
        {"ntime", share.ntime}, {"nonce", share.nonce},   {"hash", share.hash},     {"submit", share.submit_params()}};
    line.update(more);
    print_locked(stdout, json_text(line));
  } else {
    print_locked(stdout, "share  " + json_text(share.submit_params()) + "  hash " + share.hash);
  }
}

void MiningEvents::status(const std::string& event, const nlohmann::json& fields, const std::string& text) {
  std::lock_guard lock(mutex_);
  if (json_) {
    nlohmann::json line = {{"event", event}};
    line.update(fields);
    print_locked(stdout, json_text(line));
  } else if (!text.empty()) {
    print_locked(stderr, "opkit mine: " + text);
  }
}

void MiningEvents::status_line(const std::string& text) {
  std::lock_guard lock(mutex_);
  if (!status_line_) return;
  drawn_ = text;
  std::fprintf(stderr, "\r\033[K%s", drawn_.c_str());
  std::fflush(stderr);
}

void MiningEvents::clear_status_line() {
  std::lock_guard lock(mutex_);
  if (!status_line_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_.clear();
  status_line_ = false;
}

// Each line is flushed at once: a pipe (a test, `jq`) sees shares as they are found.
void MiningEvents::print_locked(std::FILE* stream, const std::string& line) {
  if (!drawn_.empty()) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stream, "%s\n", line.c_str());
  std::fflush(stream);
  if (!drawn_.empty()) {
    std::fprintf(stderr, "%s", drawn_.c_str());
    std::fflush(stderr);
  }
}

}  // namespace opkit::cli
