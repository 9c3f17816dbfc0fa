// Parses sums lines (GNU "HEX  NAME", "HEX *NAME", escaped "\HEX  NA\\ME", BSD "SHA256 (NAME) = HEX"),
// hashes each named file and prints NAME: OK / FAILED / FAILED open or read.
#include "hash_check.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <system_error>

#include "hash_files.hpp"
#include "hash_names.hpp"
#include "opkit/hex.hpp"

namespace opkit::cli {
namespace {

struct SumsLine {
  std::string hex;
  std::string name;
};

bool is_hex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// nullopt: improperly formatted.
std::optional<SumsLine> parse_line(std::string_view line, ops::HashAlgo algo) {
  std::size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  line.remove_prefix(i);
  bool escaped = false;
  if (!line.empty() && line[0] == '\\') {
    escaped = true;
    line.remove_prefix(1);
  }
  SumsLine out;
  const std::string tag = upper(ops::hash_algo_name(algo)) + " (";
  if (line.substr(0, tag.size()) == tag) {  // BSD style: TAG (NAME) = HEX
    const std::size_t close = line.rfind(") = ");
    if (close == std::string_view::npos || close < tag.size()) return std::nullopt;
    out.name = line.substr(tag.size(), close - tag.size());
    out.hex = line.substr(close + 4);
  } else {  // GNU style: HEX, a space, a space or '*', NAME
    if (line.size() < 66 || line[64] != ' ') return std::nullopt;
    out.hex = line.substr(0, 64);
    std::size_t name_at = 65;
    if (line[65] == ' ' || line[65] == '*') name_at = 66;
    out.name = line.substr(name_at);
  }
  if (!is_hex64(out.hex) || out.name.empty()) return std::nullopt;
  if (escaped) {
    auto name = unescape_digest_name(out.name);
    if (!name) return std::nullopt;
    out.name = *name;
  }
  return out;
}

bool same_hex(std::string_view a, std::string_view b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

void warn(std::size_t count, const char* one, const char* many) {
  if (count == 0) return;
  std::fflush(stdout);
  std::fprintf(stderr, "opkit: WARNING: %zu %s\n", count, count == 1 ? one : many);
}

// Returns whether every line of this sums file checked out.
bool check_one(const std::string& sums_file, const CheckOptions& options) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (sums_file != "-") {
    file.open(sums_file, std::ios::binary);
    if (!file) {
      const int err = errno;
      std::fflush(stdout);
      std::fprintf(stderr, "opkit: %s: %s\n", quote_name(sums_file).c_str(),
                   std::generic_category().message(err).c_str());
      return false;
    }
    in = &file;
  }
  std::size_t misformatted = 0, unreadable = 0, mismatched = 0, checked = 0;
  std::string line;
  while (std::getline(*in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    auto entry = parse_line(line, options.algo);
    if (!entry) {
      ++misformatted;
      continue;
    }
    ++checked;
    FileDigest result = hash_file(entry->name, options.algo);
    const std::string shown = check_result_name(entry->name);
    if (!result.digest) {
      ++unreadable;
      std::fflush(stdout);
      std::fprintf(stderr, "opkit: %s: %s\n", quote_name(entry->name).c_str(), result.error.c_str());
      if (!options.status) std::printf("%s: FAILED open or read\n", shown.c_str());
    } else if (!same_hex(to_hex(*result.digest), entry->hex)) {
      ++mismatched;
      if (!options.status) std::printf("%s: FAILED\n", shown.c_str());
    } else if (!options.quiet && !options.status) {
      std::printf("%s: OK\n", shown.c_str());
    }
  }
  if (checked == 0) {
    std::fflush(stdout);
    std::fprintf(stderr, "opkit: %s: no properly formatted checksum lines found\n",
                 sums_file == "-" ? "standard input" : quote_name(sums_file).c_str());
    return false;
  }
  if (!options.status) {
    warn(misformatted, "line is improperly formatted", "lines are improperly formatted");
    warn(unreadable, "listed file could not be read", "listed files could not be read");
    warn(mismatched, "computed checksum did NOT match", "computed checksums did NOT match");
  }
  return unreadable == 0 && mismatched == 0;
}

}  // namespace

int check_sums_files(const std::vector<std::string>& sums_files, const CheckOptions& options) {
  bool ok = true;
  for (const std::string& sums_file : sums_files) ok = check_one(sums_file, options) && ok;
  std::fflush(stdout);
  return ok ? 0 : 1;
}

}  // namespace opkit::cli
