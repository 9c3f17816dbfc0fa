// `opkit mine --job FILE.json`: every header of a Stratum job, extranonce2 counted up from its
// first value (then ntime, when the file allows), every share of each reported as mining.submit
// would send it (see mine_stratum.hpp, docs/stratum.md).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <vector>

#include "cli_stop_signals.hpp"
#include "mine_events.hpp"
#include "mine_job_file.hpp"
#include "mine_report.hpp"
#include "mine_stratum.hpp"
#include "opkit/error.hpp"
#include "opkit/hex.hpp"
#include "opkit/ops/share_search.hpp"
#include "opkit/ops/stratum.hpp"

namespace opkit::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::uint8_t> first_extranonce2(const StratumRun& run, std::size_t size) {
  if (!run.extranonce2) return std::vector<std::uint8_t>(size, 0);
  std::vector<std::uint8_t> e2 = parse_hex(*run.extranonce2, "--extranonce2");
  if (e2.size() != size)
    throw Error(Errc::invalid_argument, "opkit mine --extranonce2",
                "--extranonce2 must be " + std::to_string(size) + " bytes (the job's extranonce2_size), got " +
                    std::to_string(e2.size()));
  return e2;
}

// Where a search stopped: the header being searched and how far into its nonces.
nlohmann::json position_json(const ops::StratumJob& job, const std::vector<std::uint8_t>& e2, std::uint32_t ntime,
                             const ops::ShareSearchResult& r) {
  return {{"job_id", job.job_id},
          {"extranonce2", to_hex(e2)},
          {"ntime", ops::stratum_hex32(ntime)},
          {"searched_through", r.searched_through ? nlohmann::json(*r.searched_through) : nlohmann::json(nullptr)}};
}

}  // namespace

int run_mine_job(const std::string& path, const StratumRun& run, ops::MineOptions options) {
  const JobFile file = read_job_file(path);
  std::vector<std::uint8_t> e2 = first_extranonce2(run, file.extranonce.extranonce2_size);
  const std::vector<std::uint8_t> e2_first = e2;

  MiningEvents events(run.json, !run.quiet && isatty(STDERR_FILENO));
  StopSignals signals;
  std::atomic<bool> stop{false};
  const auto started = Clock::now();
  const auto past_deadline = [&] {
    return run.max_seconds && std::chrono::duration<double>(Clock::now() - started).count() >= *run.max_seconds;
  };
  std::uint64_t shares = 0, headers = 0, hashes_before = 0;
  std::uint32_t ntime = file.job.ntime;
  options.stop = &stop;
  options.progress_seconds = 0.1;  // also how often the signal flag and the deadline are looked at
  options.progress = [&](const ops::MineProgress& p) {
    if (signals.requested() || past_deadline()) stop = true;
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    events.status_line("job " + file.job.job_id + "  extranonce2 " + to_hex(e2) + "  " +
                       std::to_string(100 * p.hashes / std::max<std::uint64_t>(p.total, 1)) + "% of header  shares " +
                       std::to_string(shares) + "  " +
                       rate_text(seconds > 0 ? static_cast<double>(hashes_before + p.hashes) / seconds : 0));
  };

  std::string reason = "exhausted";  // every extranonce2 (and ntime allowed) searched
  nlohmann::json stopped_at = nullptr;
  ops::ShareSearchResult last;
  for (;;) {
    const ops::BlockHeader header = ops::stratum_header(file.job, file.extranonce, e2, ntime);
    ++headers;
    events.status("header",
                  {{"job_id", file.job.job_id},
                   {"extranonce2", to_hex(e2)},
                   {"ntime", ops::stratum_hex32(ntime)},
                   {"header", header.hex()}},
                  "");
    last = ops::search_shares(
        header, file.share_target, run.nonces, options, [&](std::uint32_t nonce, const Sha256Digest& digest) {
          ops::BlockHeader solved = header;
          solved.set_nonce(nonce);
          events.share(found_share(run.worker, file.job.job_id, e2, ntime, nonce, digest), {{"header", solved.hex()}});
          if (++shares == run.max_shares) stop = true;
        });
    hashes_before += last.hashes;
    if (signals.requested() || past_deadline()) stop = true;
    if (stop || last.interrupted) {
      reason = signals.requested()                             ? "interrupted"
               : (run.max_shares && shares >= *run.max_shares) ? "shares"
                                                               : "seconds";
      stopped_at = position_json(file.job, e2, ntime, last);
      break;
    }
    ops::next_extranonce2(e2);
    if (e2 == e2_first) {  // every extranonce2 of this ntime searched
      if (ntime - file.job.ntime >= file.ntime_roll) break;
      ++ntime;
    }
  }
  events.clear_status_line();

  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  const double rate = seconds > 0 ? static_cast<double>(hashes_before) / seconds : 0;
  events.status("done",
                {{"reason", reason},
                 {"shares", shares},
                 {"headers", headers},
                 {"hashes", hashes_before},
                 {"seconds", seconds},
                 {"hashrate", rate},
                 {"stopped_at", stopped_at},
                 {"devices", last.engines}},
                "");
  if (!run.json) {
    std::printf("shares    %llu\nheaders   %llu\nhashes    %llu\nseconds   %.3f\nhashrate  %s\n",
                static_cast<unsigned long long>(shares), static_cast<unsigned long long>(headers),
                static_cast<unsigned long long>(hashes_before), seconds, rate_text(rate).c_str());
    for (const auto& engine : last.engines) std::printf("device    %s\n", engine.c_str());
  }
  if (reason == "interrupted") {
    const std::string searched = last.searched_through
                                     ? "nonces [" + std::to_string(run.nonces.first) + ", " +
                                           std::to_string(*last.searched_through) + "] of that header were searched"
                                     : "none of that header's nonces was searched";
    std::fprintf(stderr, "opkit mine: interrupted in job %s at extranonce2 %s, ntime %s: %s\n", file.job.job_id.c_str(),
                 to_hex(e2).c_str(), ops::stratum_hex32(ntime).c_str(), searched.c_str());
    return 130;
  }
  return shares > 0 ? 0 : 1;
}

}  // namespace opkit::cli
