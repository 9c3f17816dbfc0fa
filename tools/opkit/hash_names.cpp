// sha256sum's name escaping (digest lines, --check results) and shell quoting (error messages).
#include "hash_names.hpp"

#include <vector>

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

namespace {

// Which bytes of `name` belong to well-formed UTF-8 sequences of two or more bytes. Those print as
// themselves in a UTF-8 locale; any other byte of 0x80 or above is shown as $'\ooo', as gnulib
// quotes bytes that do not decode.
std::vector<bool> utf8_multibyte(std::string_view name) {
  std::vector<bool> valid(name.size(), false);
  for (std::size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    const std::size_t length = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 1;
    bool ok = length > 1 && i + length <= name.size();
    for (std::size_t k = 1; ok && k < length; ++k) ok = (static_cast<unsigned char>(name[i + k]) & 0xC0) == 0x80;
    if (ok && length == 3) {  // no overlong forms, no surrogates
      const auto next = static_cast<unsigned char>(name[i + 1]);
      ok = !(c == 0xE0 && next < 0xA0) && !(c == 0xED && next >= 0xA0);
    } else if (ok && length == 4) {
      const auto next = static_cast<unsigned char>(name[i + 1]);
      ok = !(c == 0xF0 && next < 0x90) && !(c == 0xF4 && next >= 0x90);
    }
    if (!ok) {
      ++i;
      continue;
    }
    for (std::size_t k = 0; k < length; ++k) valid[i + k] = true;
    i += length;
  }
  return valid;
}

}  // namespace

std::string quote_name(std::string_view name) {
  // gnulib's shell-escape quoting, as coreutils uses for names in messages.
  const std::vector<bool> multibyte = utf8_multibyte(name);
  const auto undecodable = [&](std::size_t i) { return static_cast<unsigned char>(name[i]) >= 0x80 && !multibyte[i]; };
  auto safe = [](unsigned char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("%+,-./@_").find(static_cast<char>(c)) != std::string_view::npos ||
           (!first && (c == '~' || c == '#')) || c >= 0x80;
  };
  bool plain = !name.empty(), control = false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    plain = plain && safe(c, i == 0) && !undecodable(i);
    control = control || c < 0x20 || c == 0x7f || undecodable(i);
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
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c == '\'') {
      close_quote();
      out += "\\'";
    } else if (c < 0x20 || c == 0x7f || undecodable(i)) {
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
