// Stratum V1's JSON-RPC messages, one per line: requests and notifications the pool sends
// (a "method"), answers to the client's requests (a "result" or "error"), and the client's own.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace opkit::cli {

// nlohmann::json's default constructor is not noexcept, but a null value allocates nothing.
struct RpcMessage {       // NOLINT(bugprone-exception-escape)
  nlohmann::json id;      // null for a notification
  std::string method;     // empty for an answer
  nlohmann::json params;  // of a method
  nlohmann::json result;  // of an answer
  nlohmann::json error;   // of an answer: null, or [code, "message", traceback] or an object
  bool is_answer() const { return method.empty(); }
};

// Throws Error(runtime) quoting the line when it is not a JSON object with a string "method" or
// an id with "result"/"error".
RpcMessage parse_rpc_line(std::string_view line);

// {"id": id, "method": method, "params": params}
std::string rpc_request(std::uint64_t id, std::string_view method, const nlohmann::json& params);
// {"id": id, "result": result, "error": error}
std::string rpc_answer(const nlohmann::json& id, const nlohmann::json& result, const nlohmann::json& error);

// An answer's error as text: "23 Low difficulty share" from [23, "Low difficulty share", null].
std::string rpc_error_text(const nlohmann::json& error);

// The first 120 characters of a pool's line, for messages (a pool may send anything).
std::string quoted_line(std::string_view line);

}  // namespace opkit::cli
