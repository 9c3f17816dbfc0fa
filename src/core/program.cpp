// Program-level helpers: kernel-name discovery for C++-linkage kernels, and the byte format of a
// CompiledProgram in the on-disk cache.
#include "opkit/program.hpp"

#include <cstring>
#include <regex>

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

}  // namespace

const char* binary_format_name(BinaryFormat format) noexcept {
  switch (format) {
    case BinaryFormat::cubin:
      return "cubin";
    case BinaryFormat::ptx:
      return "PTX";
    case BinaryFormat::host_dso:
      return "host shared object";
  }
  return "unknown";
}

std::vector<std::string> find_kernel_names(const std::string& source) {
  std::string code = code_only(source);
  // Drop __launch_bounds__(...) and __attribute__((...)) so the name is the identifier before '('.
  code = std::regex_replace(code, std::regex(R"(__launch_bounds__\s*\([^)]*\))"), " ");
  code = std::regex_replace(code, std::regex(R"(__attribute__\s*\(\([^)]*\)\))"), " ");
  // Never destroyed: compiles on other threads may still scan sources while the process exits.
  static const auto& kernel =
      *new std::regex(R"((template\s*<[^;{]*>\s*)?(extern\s+"C"\s*)?__global__[^(;{]*?\b([A-Za-z_]\w*)\s*\()");
  std::vector<std::string> names;
  for (std::sregex_iterator it(code.begin(), code.end(), kernel), end; it != end; ++it) {
    if ((*it)[1].matched) continue;  // templates need explicit name expressions: f<int>
    std::string name = (*it)[3];
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

// Layout: magic "OPKITCP1", then fields each as <u64 length><bytes>; lowered names as a count
// followed by key/value pairs. Any inconsistency makes deserialize fail (a cache miss).
namespace {
constexpr char kMagic[8] = {'O', 'P', 'K', 'I', 'T', 'C', 'P', '1'};

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
  put_u64(out, static_cast<std::uint64_t>(format));
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
  std::uint64_t format = 0, count = 0;
  std::string binary;
  CompiledProgram p;
  if (!r.u64(format) || format < 1 || format > 3) return false;
  p.format = static_cast<BinaryFormat>(format);
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
