// One line of a sums file, read as coreutils 9.x's sha256sum -c reads it:
//   GNU       HEX  NAME  /  HEX *NAME  (a space or tab after the digest, then the mode marker)
//   reversed  HEX NAME   /  HEX<TAB>NAME  (BSD `sha256 -r`: one separator, no marker)
//   BSD tag   SHA256 (NAME) = HEX  (--tag output; the last ')' ends the name)
// with an optional leading backslash for escaped names (\\, \n, \r). As in coreutils, the first
// GNU-or-reversed line decides which of the two later lines are: a file whose name starts with a
// space or '*' can then never be confused for the other form.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace opkit::cli {

struct SumsLine {
  std::string hex;   // 64 hex digits, either case
  std::string name;  // unescaped
};

class SumsLineParser {
 public:
  // tag: the BSD algorithm name, "SHA256" (or "SHA256D").
  explicit SumsLineParser(std::string tag) : tag_(std::move(tag)) {}

  // nullopt: improperly formatted.
  std::optional<SumsLine> parse(std::string_view line);

 private:
  enum class Form { undecided, gnu, reversed };
  std::string tag_;
  Form form_ = Form::undecided;
};

}  // namespace opkit::cli
