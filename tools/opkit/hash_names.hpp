// File names as coreutils' sha256sum writes and reads them: the escaped form of digest lines
// and check results, and the shell quoting of names in error messages.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace opkit::cli {

// A digest line's name: a name with a backslash, newline or carriage return is written with
// those escaped (\\, \n, \r) and the whole line starts with a backslash; `escaped` says so.
struct EscapedName {
  std::string text;
  bool escaped = false;
};
EscapedName escape_digest_name(std::string_view name);

// A name in `--check` output: escaped as in a digest line, with a leading backslash, as current
// coreutils writes it (9.1 escaped only names with a newline there).
std::string check_result_name(std::string_view name);

// Reverses escape_digest_name for a line that started with a backslash; nullopt for a bad escape.
std::optional<std::string> unescape_digest_name(std::string_view text);

// The name as sha256sum quotes it in error messages: as is when it has only safe characters,
// else in single quotes, with $'\n'-style pieces for control characters.
std::string quote_name(std::string_view name);

}  // namespace opkit::cli
