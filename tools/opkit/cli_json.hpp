// The text of the CLI's --json output. Names and paths come from the user's file system and need
// not be UTF-8, which JSON requires: such bytes are replaced (U+FFFD) instead of failing the
// whole output.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace opkit::cli {

inline std::string json_text(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace opkit::cli
