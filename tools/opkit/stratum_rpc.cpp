// Stratum's JSON-RPC lines (see stratum_rpc.hpp).
#include "stratum_rpc.hpp"

#include "cli_json.hpp"
#include "opkit/error.hpp"

namespace opkit::cli {

std::string quoted_line(std::string_view line) {
  std::string text(line.substr(0, 120));
  if (line.size() > 120) text += "...";
  return "'" + text + "'";
}

RpcMessage parse_rpc_line(std::string_view line) {
  nlohmann::json message;
  try {
    message = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception&) {  // parse_error, and out_of_range for a number past a double
    throw Error(Errc::runtime, "stratum message", "the pool sent a line that is not JSON: " + quoted_line(line));
  }
  if (!message.is_object())
    throw Error(Errc::runtime, "stratum message", "the pool sent JSON that is not an object: " + quoted_line(line));
  RpcMessage out;
  out.id = message.value("id", nlohmann::json());
  if (const auto method = message.find("method"); method != message.end() && !method->is_null()) {
    if (!method->is_string())
      throw Error(Errc::runtime, "stratum message", "the pool sent a non-string method: " + quoted_line(line));
    out.method = method->get<std::string>();
    if (out.method.empty())
      throw Error(Errc::runtime, "stratum message", "the pool sent an empty method: " + quoted_line(line));
    out.params = message.value("params", nlohmann::json::array());
    return out;
  }
  if (out.id.is_null() || (!message.contains("result") && !message.contains("error")))
    throw Error(Errc::runtime, "stratum message",
                "the pool sent neither a method nor an answer with an id: " + quoted_line(line));
  out.result = message.value("result", nlohmann::json());
  out.error = message.value("error", nlohmann::json());
  return out;
}

std::string rpc_request(std::uint64_t id, std::string_view method, const nlohmann::json& params) {
  return json_text({{"id", id}, {"method", method}, {"params", params}});
}

std::string rpc_answer(const nlohmann::json& id, const nlohmann::json& result, const nlohmann::json& error) {
  return json_text({{"id", id}, {"result", result}, {"error", error}});
}

std::string rpc_error_text(const nlohmann::json& error) {
  if (error.is_null()) return "no reason given";
  if (error.is_array() && error.size() >= 2 && error[1].is_string())
    return (error[0].is_number() ? json_text(error[0]) + " " : std::string()) + error[1].get<std::string>();
  if (error.is_object() && error.contains("message") && error["message"].is_string())
    return (error.contains("code") ? json_text(error["code"]) + " " : std::string()) +
           error["message"].get<std::string>();
  if (error.is_string()) return error.get<std::string>();
  std::string text = json_text(error);
  return text.size() > 120 ? text.substr(0, 117) + "..." : text;
}

}  // namespace opkit::cli
