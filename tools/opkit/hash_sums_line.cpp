// See hash_sums_line.hpp; the rules follow coreutils' split_3 and bsd_split_3.
#include "hash_sums_line.hpp"

#include <cctype>

#include "hash_names.hpp"

namespace opkit::cli {
namespace {

constexpr std::size_t kHexDigits = 64;

bool is_white(char c) {
  return c == ' ' || c == '\t';
}

bool is_hex(std::string_view s) {
  if (s.size() != kHexDigits) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// TAG (NAME) = HEX, from just after the '('.
std::optional<SumsLine> parse_bsd(std::string_view rest) {
  const std::size_t close = rest.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::size_t p = close + 1;
  while (p < rest.size() && is_white(rest[p])) ++p;
  if (p >= rest.size() || rest[p] != '=') return std::nullopt;
  ++p;
  while (p < rest.size() && is_white(rest[p])) ++p;
  SumsLine out{std::string(rest.substr(p)), std::string(rest.substr(0, close))};
  if (!is_hex(out.hex)) return std::nullopt;
  return out;
}

}  // namespace

std::optional<SumsLine> SumsLineParser::parse(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && is_white(line[i])) ++i;
  bool escaped = false;
  if (i < line.size() && line[i] == '\\') {
    escaped = true;
    ++i;
  }
  std::optional<SumsLine> out;
  std::string_view rest = line.substr(i);
  if (rest.starts_with(tag_)) {
    std::size_t p = tag_.size();
    if (p < rest.size() && rest[p] == ' ') ++p;
    if (p < rest.size() && rest[p] == '(') out = parse_bsd(rest.substr(p + 1));
  }
  if (!out) {
    if (rest.size() < kHexDigits + 2 || !is_hex(rest.substr(0, kHexDigits)) || !is_white(rest[kHexDigits]))
      return std::nullopt;
    std::size_t p = kHexDigits + 1;
    const bool marker = rest.size() - p > 1 && (rest[p] == ' ' || rest[p] == '*');
    if (!marker) {  // one separator: the reversed form, refused once GNU lines came first
      if (form_ == Form::gnu) return std::nullopt;
      form_ = Form::reversed;
    } else if (form_ != Form::reversed) {
      form_ = Form::gnu;
      ++p;  // the mode marker
    }
    out = SumsLine{std::string(rest.substr(0, kHexDigits)), std::string(rest.substr(p))};
  }
  if (out->name.empty()) return std::nullopt;
  if (escaped) {
    auto name = unescape_digest_name(out->name);
    if (!name) return std::nullopt;
    out->name = std::move(*name);
  }
  return out;
}

}  // namespace opkit::cli
