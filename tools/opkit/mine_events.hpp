// What `opkit mine --job` and `--pool` print: one line per share and per status change, either as
// text (shares on stdout, status changes on stderr) or as JSON lines on stdout (--json), and a
// status line redrawn on stderr when it is a terminal. Lines from several threads never interleave.
#pragma once

#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "opkit/sha256_hasher.hpp"

namespace opkit::cli {

// A share as mining.submit sends it (all hex as Stratum writes it), and its hash.
struct FoundShare {
  std::string worker, job_id, extranonce2, ntime, nonce;
  std::string hash;  // explorer order
  // [worker, job_id, extranonce2, ntime, nonce]: mining.submit's params.
  nlohmann::json submit_params() const;
};

// The share of `nonce` in the header built from this job, extranonce2 and ntime.
FoundShare found_share(const std::string& worker, const std::string& job_id, std::span<const std::uint8_t> extranonce2,
                       std::uint32_t ntime, std::uint32_t nonce, const Sha256Digest& digest);

class MiningEvents {
 public:
  MiningEvents(bool json, bool status_line) : json_(json), status_line_(status_line) {}

  // A share found: {"event": "share", worker, job_id, extranonce2, ntime, nonce, hash, submit, ...more}.
  void share(const FoundShare& share, const nlohmann::json& more = nlohmann::json::object());
  // A status change: the JSON line {"event": event, ...fields}, or `text` on stderr (nothing in
  // text mode when `text` is empty: changes too frequent to be worth a line).
  void status(const std::string& event, const nlohmann::json& fields, const std::string& text);
  // Redraws the status line; clear_status_line() removes it for good (before the summary).
  void status_line(const std::string& text);
  void clear_status_line();

 private:
  void print_locked(std::FILE* stream, const std::string& line);

  std::mutex mutex_;
  const bool json_;
  bool status_line_;
  std::string drawn_;  // the status line on screen, redrawn after a line is printed
};

}  // namespace opkit::cli
