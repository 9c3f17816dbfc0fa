// Every share of a header (see opkit/ops/share_search.hpp), through mine() from one past each find.
#include "opkit/ops/share_search.hpp"

namespace opkit::ops {

ShareSearchResult search_shares(const BlockHeader& header, const Target& target, const NonceRange& range,
                                const MineOptions& options,
                                const std::function<void(std::uint32_t nonce, const Sha256Digest& digest)>& on_share) {
  ShareSearchResult out;
  MineOptions call = options;
  std::uint64_t hashes_before = 0;  // of the earlier calls, so that progress covers the whole range
  if (options.progress)
    call.progress = [&](const MineProgress& p) {
      MineProgress whole = p;
      whole.hashes += hashes_before;
      whole.total = range.last - range.first + 1;
      whole.seconds += out.seconds;
      whole.rate = whole.seconds > 0 ? static_cast<double>(whole.hashes) / whole.seconds : 0;
      options.progress(whole);
    };
  BitcoinJob job;
  job.header = header;
  job.target = target;
  job.start = range.first;
  for (;;) {
    job.count = range.last - job.start + 1;
    const MineResult r = mine(job, call);
    out.hashes += r.hashes;
    hashes_before = out.hashes;
    out.seconds += r.seconds;
    if (out.engines.empty()) out.engines = r.engines;
    if (r.searched_through) out.searched_through = *r.searched_through;
    if (r.found) {
      ++out.shares;
      on_share(static_cast<std::uint32_t>(r.nonce), r.digest);
      if (r.nonce == range.last) return out;
      job.start = r.nonce + 1;
      // A stop that came while this share was reported ends the search here, not one call later.
      if (options.stop && options.stop->load()) {
        out.interrupted = true;
        return out;
      }
      continue;
    }
    out.interrupted = r.interrupted;
    return out;
  }
}

}  // namespace opkit::ops
