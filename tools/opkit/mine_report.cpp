// Progress line and result printing for `opkit mine` (see mine_report.hpp).
#include "mine_report.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_json.hpp"

namespace opkit::cli {
namespace {

std::string duration_text(double seconds) {
  char text[32];
  if (seconds < 120) {
    std::snprintf(text, sizeof text, "%.0fs", seconds);
  } else if (seconds < 7200) {
    std::snprintf(text, sizeof text, "%.0fm", seconds / 60);
  } else if (seconds < 86400.0 * 365) {
    std::snprintf(text, sizeof text, "%.1fh", seconds / 3600);
  } else {
    std::snprintf(text, sizeof text, ">1y");
  }
  return text;
}

// Where an interrupted search goes on: {"start": S, "count": N} covering exactly the rest of the
// range; null when the search was not interrupted or nothing is left.
nlohmann::json resume_json(const ops::MineResult& r, const ops::NonceRange& range) {
  if (!r.interrupted || (r.searched_through && *r.searched_through == range.last)) return nullptr;
  const std::uint64_t next = r.searched_through ? *r.searched_through + 1 : range.first;
  return {{"start", next}, {"count", range.last - next + 1}};
}

}  // namespace

std::string rate_text(double rate) {
  const char* units[] = {"H/s", "kH/s", "MH/s", "GH/s", "TH/s"};
  int u = 0;
  while (rate >= 1000 && u < 4) {
    rate /= 1000;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.2f %s", rate, units[u]);
  return text;
}

std::function<void(const ops::MineProgress&)> terminal_progress(double hashes_per_find) {
  return [hashes_per_find](const ops::MineProgress& p) {
    const double total = static_cast<double>(p.total);
    const double done = static_cast<double>(p.hashes);
    // Past 2^40 nonces a search is not expected to reach its end: say what is meaningful instead.
    if (total > 0x1p40) {
      const std::string expected = p.rate > 0 && hashes_per_find > 0
                                       ? "  a find expected every " + duration_text(hashes_per_find / p.rate)
                                       : std::string();
      char text[64];
      std::snprintf(text, sizeof text, "  %.4g nonces tried", done);
      show_progress(rate_text(p.rate) + text + expected);
    } else {
      const double percent = total > 0 ? 100.0 * done / total : 0;
      const std::string eta = p.rate > 0 ? duration_text((total - done) / p.rate) : "?";
      char text[64];
      std::snprintf(text, sizeof text, "  %.2f%% of range  ETA ", percent);
      show_progress(rate_text(p.rate) + text + eta);
    }
  };
}

void print_result(const ops::MineResult& r, const ops::NonceRange& range, bool json) {
  const double rate = r.seconds > 0 ? static_cast<double>(r.hashes) / r.seconds : 0;
  if (json) {
    nlohmann::json out = {
        {"found", r.found},
        {"nonce", r.found ? nlohmann::json(r.nonce) : nlohmann::json(nullptr)},
        {"hash", r.found ? nlohmann::json(r.hash_hex) : nlohmann::json(nullptr)},
        {"hashes", r.hashes},
        {"rehashes", r.rehashes},
        {"seconds", r.seconds},
        {"hashrate", rate},
        {"start", range.first},
        {"last", range.last},
        {"interrupted", r.interrupted},
        {"searched_through", r.searched_through ? nlohmann::json(*r.searched_through) : nlohmann::json(nullptr)},
        {"resume", resume_json(r, range)},
        {"devices", r.engines}};
    std::printf("%s\n", json_text(out).c_str());
  } else {
    if (r.found) {
      std::printf("nonce     %llu\nhash      %s\n", static_cast<unsigned long long>(r.nonce), r.hash_hex.c_str());
    } else if (!r.interrupted) {
      std::printf("not found in [%llu, %llu]\n", static_cast<unsigned long long>(range.first),
                  static_cast<unsigned long long>(range.last));
    }
    std::printf("hashes    %llu\nseconds   %.3f\nhashrate  %s\n", static_cast<unsigned long long>(r.hashes), r.seconds,
                rate_text(rate).c_str());
    for (const auto& engine : r.engines) std::printf("device    %s\n", engine.c_str());
  }
  if (r.interrupted) {
    const std::uint64_t next = r.searched_through ? *r.searched_through + 1 : range.first;
    const bool done = r.searched_through && *r.searched_through == range.last;
    if (r.searched_through)
      std::fprintf(stderr, "opkit mine: interrupted; every nonce of [%llu, %llu] was searched; ",
                   static_cast<unsigned long long>(range.first), static_cast<unsigned long long>(*r.searched_through));
    else
      std::fprintf(stderr, "opkit mine: interrupted before any nonce was searched; ");
    if (done)
      std::fprintf(stderr, "nothing of the range is left\n");
    else  // the complete tail: resuming as told searches exactly the rest of the original range
      std::fprintf(stderr, "resume with --start %llu --count %llu\n", static_cast<unsigned long long>(next),
                   static_cast<unsigned long long>(range.last - next) + 1);
  }
}

}  // namespace opkit::cli
