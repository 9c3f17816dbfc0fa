// Reads sums files line by line (hash_sums_line.hpp), hashes each named file and reports
// NAME: OK / FAILED / FAILED open or read, as sha256sum -c does.
#include "hash_check.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <system_error>

#include "cli_json.hpp"
#include "cli_stop_signals.hpp"
#include "hash_files.hpp"
#include "hash_names.hpp"
#include "hash_sums_line.hpp"
#include "opkit/hex.hpp"

namespace opkit::cli {
namespace {

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
bool check_one(const std::string& sums_file, const CheckOptions& options, SumsLineParser& parser,
               nlohmann::json& results) {
  // A sums "file" that cannot be read (a directory, a closed standard input) is a read error, as
  // coreutils says, not a file without checksum lines.
  const auto read_error = [&](int err) {
    const std::string shown = sums_file == "-" ? "'standard input'" : quote_name(sums_file);
    std::fflush(stdout);
    std::fprintf(stderr, "opkit: %s: read error\n", shown.c_str());
    if (err != 0)
      std::fprintf(stderr, "opkit: %s: %s\n", sums_file == "-" ? "standard input" : shown.c_str(),
                   std::generic_category().message(err).c_str());
    return false;
  };
  struct stat st {};
  if (sums_file == "-" ? ::fcntl(STDIN_FILENO, F_GETFL) == -1
                       : ::stat(sums_file.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return read_error(sums_file == "-" ? EBADF : 0);
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
  const std::string shown_file = sums_file == "-" ? "standard input" : quote_name(sums_file);
  const bool quiet_output = options.status || options.json;
  const auto record = [&](const std::string& name, const char* result) {
    if (options.json) results.push_back({{"file", name}, {"result", result}, {"sums_file", sums_file}});
  };
  std::size_t misformatted = 0, unreadable = 0, mismatched = 0, checked = 0, verified = 0, line_number = 0;
  std::string line;
  while (!stop_requested() && std::getline(*in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    auto entry = parser.parse(line);
    if (!entry) {
      ++misformatted;
      if (options.warn && !options.status) {
        std::fflush(stdout);
        std::fprintf(stderr, "opkit: %s: %zu: improperly formatted %s checksum line\n", shown_file.c_str(), line_number,
                     options.algo == ops::HashAlgo::sha256 ? "SHA256" : "SHA256D");
      }
      continue;
    }
    ++checked;
    if (options.ignore_missing && ::access(entry->name.c_str(), F_OK) != 0 && errno == ENOENT) continue;
    ++verified;
    FileDigest result = hash_file(entry->name, options.algo);
    const std::string shown = check_result_name(entry->name);
    if (!result.digest) {
      if (stop_requested()) break;
      ++unreadable;
      std::fflush(stdout);
      std::fprintf(stderr, "opkit: %s: %s\n", quote_name(entry->name).c_str(), result.error.c_str());
      if (!quiet_output) std::printf("%s: FAILED open or read\n", shown.c_str());
      record(entry->name, "FAILED open or read");
    } else if (!same_hex(to_hex(*result.digest), entry->hex)) {
      ++mismatched;
      if (!quiet_output) std::printf("%s: FAILED\n", shown.c_str());
      record(entry->name, "FAILED");
    } else {
      if (!options.quiet && !quiet_output) std::printf("%s: OK\n", shown.c_str());
      record(entry->name, "OK");
    }
  }
  if (in->bad()) return read_error(0);
  if (stop_requested()) {
    std::fflush(stdout);
    std::fprintf(stderr, "opkit hash: interrupted; %zu files of %s were checked\n", verified, shown_file.c_str());
    return false;
  }
  if (checked == 0) {
    std::fflush(stdout);
    std::fprintf(stderr, "opkit: %s: no properly formatted checksum lines found\n", shown_file.c_str());
    return false;
  }
  if (!options.status) {
    warn(misformatted, "line is improperly formatted", "lines are improperly formatted");
    warn(unreadable, "listed file could not be read", "listed files could not be read");
    warn(mismatched, "computed checksum did NOT match", "computed checksums did NOT match");
  }
  if (options.ignore_missing && verified == 0) {
    std::fflush(stdout);
    std::fprintf(stderr, "opkit: %s: no file was verified\n", shown_file.c_str());
    return false;
  }
  return unreadable == 0 && mismatched == 0 && (!options.strict || misformatted == 0);
}

}  // namespace

int check_sums_files(const std::vector<std::string>& sums_files, const CheckOptions& options) {
  // One parser for the whole run: coreutils decides the GNU-or-reversed form once.
  SumsLineParser parser(options.algo == ops::HashAlgo::sha256 ? "SHA256" : "SHA256D");
  nlohmann::json results = nlohmann::json::array();
  bool ok = true;
  for (const std::string& sums_file : sums_files) {
    if (stop_requested()) break;
    ok = check_one(sums_file, options, parser, results) && ok;
  }
  if (options.json) std::printf("%s\n", json_text({{"ok", ok}, {"results", results}}).c_str());
  if (stop_requested()) return 130;
  return ok ? 0 : 1;
}

}  // namespace opkit::cli
