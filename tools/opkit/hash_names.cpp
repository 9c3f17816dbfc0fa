// sha256sum's name escaping (digest lines, --check results) and shell quoting (error messages).
#include "hash_names.hpp"

#include <cstdio>

namespace opkit::cli {

EscapedName escape_digest_name(std::string_view name) {
  EscapedName out;
  out.escaped = name.find_first_of("\\\n\r") != std::string_view::npos;
  // push_back rather than += "..": GCC 12 at -O3 raises a false -Wrestrict on short appends.
  for (char c : name) {
    const char escape = c == '\\' ? '\\' : (c == '\n' ? 'n' : (c == '\r' ? 'r' : '\0'));
    if (escape != '\0') out.text.push_back('\\');
    out.text.push_back(escape != '\0' ? escape : c);
  }
  return out;
}

std::string check_result_name(std::string_view name) {
  const EscapedName escaped = escape_digest_name(name);
  return escaped.escaped ? "\\" + escaped.text : escaped.text;
}

std::optional<std::string> unescape_digest_name(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    if (++i == text.size()) return std::nullopt;
    switch (text[i]) {
      case '\\':
        out += '\\';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      default:
        return std::nullopt;
    }
  }
  return out;
}

std::string quote_name(std::string_view name) {
  // gnulib's shell-escape quoting, as coreutils uses for names in messages.
  auto safe = [](unsigned char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("%+,-./@_").find(static_cast<char>(c)) != std::string_view::npos ||
           (!first && (c == '~' || c == '#')) || c >= 0x80;
  };
  bool plain = !name.empty(), control = false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    plain = plain && safe(c, i == 0);
    control = control || c < 0x20 || c == 0x7f;
  }
  if (plain) return std::string(name);
  if (name.find('\'') != std::string_view::npos && !control && name.find_first_of("\"$`\\") == std::string_view::npos) {
    std::string quoted(1, '"');
    quoted.append(name);
    quoted.push_back('"');
    return quoted;
  }
  // Single quotes around printable runs; control characters as $'\n' or $'\ooo'; a quote as \'.
  std::string out;
  bool open = false;
  auto close_quote = [&] {
    if (open) out += '\'';
    open = false;
  };
  for (unsigned char c : name) {
    if (c == '\'') {
      close_quote();
      out += "\\'";
    } else if (c < 0x20 || c == 0x7f) {
      close_quote();
      switch (c) {
        case '\n':
          out += "$'\\n'";
          break;
        case '\r':
          out += "$'\\r'";
          break;
        case '\t':
          out += "$'\\t'";
          break;
        default: {
          char octal[8];
          std::snprintf(octal, sizeof octal, "$'\\%03o'", c);
          out += octal;
        }
      }
    } else {
      if (!open) out += '\'';
      open = true;
      out += static_cast<char>(c);
    }
  }
  close_quote();
  if (out.empty()) out = "''";
  return out;
}

}  // namespace opkit::cli
