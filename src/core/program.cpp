// Program-level helpers: kernel-name discovery for C++-linkage kernels, and the byte format of a
// CompiledProgram in the on-disk cache.
#include "opkit/program.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "opkit/detail/identifier.hpp"

namespace opkit {
namespace {

// Replaces comments and string/char literals with spaces so that a scan for `__global__`
// sees only code (a commented-out kernel must not become a name expression).
std::string code_only(const std::string& source) {
  std::string out(source);
  enum { code, line_comment, block_comment, string_lit, char_lit } state = code;
  for (std::size_t i = 0; i < out.size(); ++i) {
    char c = out[i], next = i + 1 < out.size() ? out[i + 1] : '\0';
    switch (state) {
      case code:
        if (c == '/' && next == '/')
          state = line_comment, out[i] = ' ';
        else if (c == '/' && next == '*')
          state = block_comment, out[i] = ' ', out[++i] = ' ';
        else if (c == '"')
          state = string_lit;
        else if (c == '\'')
          state = char_lit;
        break;
      case line_comment:
        if (c == '\n')
          state = code;
        else
          out[i] = ' ';
        break;
      case block_comment:
        if (c == '*' && next == '/')
          state = code, out[i] = ' ', out[++i] = ' ';
        else if (c != '\n')
          out[i] = ' ';
        break;
      case string_lit:
      case char_lit:
        if (c == '\\')
          out[i] = ' ', out[++i] = ' ';
        else if (c == (state == string_lit ? '"' : '\''))
          state = code;
        else
          out[i] = ' ';
        break;
    }
  }
  return out;
}

using detail::is_identifier_char;
using detail::is_identifier_start;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Whether `word` occurs at `at` as a whole identifier.
bool word_at(const std::string& code, std::size_t at, std::string_view word) {
  return code.compare(at, word.size(), word) == 0 && (at == 0 || !is_identifier_char(code[at - 1])) &&
         (at + word.size() >= code.size() || !is_identifier_char(code[at + word.size()]));
}

// Blanks every `keyword (...)` (balanced parentheses), e.g. __launch_bounds__(256, 2).
void blank_calls(std::string& code, std::string_view keyword) {
  for (std::size_t at = code.find(keyword); at != std::string::npos; at = code.find(keyword, at + 1)) {
    if (!word_at(code, at, keyword)) continue;
    std::size_t p = at + keyword.size();
    while (p < code.size() && is_space(code[p])) ++p;
    if (p >= code.size() || code[p] != '(') continue;
    int depth = 0;
    std::size_t end = p;
    for (; end < code.size(); ++end) {
      if (code[end] == '(') ++depth;
      if (code[end] == ')' && --depth == 0) break;
    }
    if (end >= code.size()) return;  // unbalanced: leave the rest to the compiler's error
    std::fill(code.begin() + static_cast<std::ptrdiff_t>(at), code.begin() + static_cast<std::ptrdiff_t>(end) + 1, ' ');
  }
}

// Whether the declaration that ends at `at` (from the previous ';', '{' or '}') is a template.
bool declared_as_template(const std::string& code, std::size_t at) {
  std::size_t start = code.find_last_of(";{}", at == 0 ? 0 : at - 1);
  start = start == std::string::npos || at == 0 ? 0 : start + 1;
  while (start < at && is_space(code[start])) ++start;
  if (!word_at(code, start, "template")) return false;
  std::size_t p = start + 8;
  while (p < at && is_space(code[p])) ++p;
  return p < at && code[p] == '<';
}

// The kernel name of the __global__ at `at`: the identifier before the first '(' that comes
// before any ';' or '{'; empty if there is none.
std::string kernel_name_after(const std::string& code, std::size_t at) {
  const std::size_t paren = code.find_first_of("(;{", at);
  if (paren == std::string::npos || code[paren] != '(') return {};
  std::size_t end = paren;
  while (end > at && is_space(code[end - 1])) --end;
  std::size_t begin = end;
  while (begin > at && is_identifier_char(code[begin - 1])) --begin;
  if (begin == end || !is_identifier_start(code[begin])) return {};
  return code.substr(begin, end - begin);
}

}  // namespace

std::string binary_format_name(std::string_view format) {
  if (format == BinaryFormat::ptx) return "PTX";
  if (format == BinaryFormat::host_dso) return "host shared object";
  return std::string(format);
}

// A hand-written scan rather than std::regex: libstdc++'s regex crashed (a null facet while
// compiling a pattern) inside the Python extension on the GPU machine, and is slow on big sources.
std::vector<std::string> find_kernel_names(const std::string& source) {
  std::string code = code_only(source);
  // Drop __launch_bounds__(...) and __attribute__((...)) so the name is the identifier before '('.
  blank_calls(code, "__launch_bounds__");
  blank_calls(code, "__attribute__");
  std::vector<std::string> names;
  constexpr std::string_view global = "__global__";
  for (std::size_t at = code.find(global); at != std::string::npos; at = code.find(global, at + 1)) {
    if (!word_at(code, at, global)) continue;
    if (declared_as_template(code, at)) continue;  // templates need explicit name expressions: f<int>
    const std::string name = kernel_name_after(code, at + global.size());
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

// Layout: magic "OPKITCP2", then fields each as <u64 length><bytes> (the format name first);
// lowered names as a count followed by key/value pairs. Any inconsistency makes deserialize fail (a cache miss).
namespace {
constexpr char kMagic[8] = {'O', 'P', 'K', 'I', 'T', 'C', 'P', '2'};

// A format name as a backend writes it: short, lower-case letters, digits, '-', '_' and '.'.
bool valid_format(const std::string& format) {
  return !format.empty() && format.size() <= 64 && std::all_of(format.begin(), format.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
}

void put_u64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_bytes(std::vector<std::uint8_t>& out, const void* data, std::size_t n) {
  put_u64(out, n);
  const auto* p = static_cast<const std::uint8_t*>(data);
  out.insert(out.end(), p, p + n);
}

struct Reader {
  const std::vector<std::uint8_t>& in;
  std::size_t pos = 0;
  bool u64(std::uint64_t& v) {
    if (in.size() - pos < 8) return false;
    v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{in[pos + i]} << (8 * i);
    pos += 8;
    return true;
  }
  bool str(std::string& s) {
    std::uint64_t n = 0;
    if (!u64(n) || in.size() - pos < n) return false;
    s.assign(reinterpret_cast<const char*>(in.data() + pos), n);
    pos += n;
    return true;
  }
};
}  // namespace

std::vector<std::uint8_t> CompiledProgram::serialize() const {
  std::vector<std::uint8_t> out(kMagic, kMagic + 8);
  put_bytes(out, format.data(), format.size());
  put_bytes(out, target.data(), target.size());
  put_bytes(out, source_name.data(), source_name.size());
  put_bytes(out, binary.data(), binary.size());
  put_bytes(out, log.data(), log.size());
  put_u64(out, lowered_names.size());
  for (const auto& [k, v] : lowered_names) {
    put_bytes(out, k.data(), k.size());
    put_bytes(out, v.data(), v.size());
  }
  return out;
}

bool CompiledProgram::deserialize(const std::vector<std::uint8_t>& bytes, CompiledProgram& out) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 8) != 0) return false;
  Reader r{bytes, 8};
  std::uint64_t count = 0;
  std::string binary;
  CompiledProgram p;
  if (!r.str(p.format) || !valid_format(p.format)) return false;
  if (!r.str(p.target) || !r.str(p.source_name) || !r.str(binary) || !r.str(p.log) || !r.u64(count)) return false;
  if (binary.empty()) return false;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string k, v;
    if (!r.str(k) || !r.str(v)) return false;
    p.lowered_names.emplace(std::move(k), std::move(v));
  }
  if (r.pos != bytes.size()) return false;
  p.binary.assign(binary.begin(), binary.end());
  out = std::move(p);
  return true;
}

}  // namespace opkit
