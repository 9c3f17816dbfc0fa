// libFuzzer target: the sums-file line reader of `opkit hash -c` (tools/opkit/hash_sums_line).
// Each input is a whole sums file; every line that parses has a 64-digit hex digest.
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hash_sums_line.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  opkit::cli::SumsLineParser parser(size % 2 == 0 ? "SHA256" : "SHA256D");
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    if (const auto entry = parser.parse(line)) {
      if (entry->hex.size() != 64) std::abort();
      for (char c : entry->hex)
        if (!std::isxdigit(static_cast<unsigned char>(c))) std::abort();
    }
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return 0;
}
