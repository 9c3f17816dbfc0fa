// The native CPU miner (see cpu_miner.hpp). Each chunk is split into one contiguous run per
// thread; a thread scans its run in order and stops at its first hit, or once it is past a hit
// that another thread found lower, so the chunk's lowest hit is exact.
#include "cpu_miner.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace opkit::ops::detail {
namespace {

constexpr std::uint64_t no_hit = std::numeric_limits<std::uint64_t>::max();

// Bitcoin: the header's second block with the padding of an 80-byte message, and the second
// hash's block with the padding of a 32-byte message; only the nonce and the digest change.
class BitcoinScanner {
 public:
  explicit BitcoinScanner(const MinePlan& plan) : plan_(plan), compress_(best_sha256_compress()) {
    std::memcpy(block_, plan.header.bytes.data() + 64, 16);
    block_[16] = 0x80;
    block_[62] = 0x02;  // 640 bits
    block_[63] = 0x80;
    digest_block_[32] = 0x80;
    digest_block_[62] = 0x01;  // 256 bits
  }

  // The first qualifying nonce of [first, last], or no_hit; stops early past `*lowest`.
  std::uint64_t scan(std::uint64_t first, std::uint64_t last, const std::atomic<std::uint64_t>& lowest) {
    const std::uint32_t top = plan_.target.top_word();
    for (std::uint64_t n = first;; ++n) {
      if ((n & 1023) == 0 && n > lowest.load(std::memory_order_relaxed)) return no_hit;
      for (int i = 0; i < 4; ++i) block_[12 + i] = static_cast<std::uint8_t>(n >> (8 * i));
      std::uint32_t state[8];
      std::memcpy(state, plan_.midstate.data(), sizeof state);
      compress_(state, block_);
      for (int i = 0; i < 8; ++i) store_be32(digest_block_ + 4 * i, state[i]);
      std::uint32_t out[8];
      std::memcpy(out, sha256_iv.data(), sizeof out);
      compress_(out, digest_block_);
      // The hash reads little-endian: its top 32 bits are the byte-reversed last word.
      if (__builtin_bswap32(out[7]) <= top) {
        Sha256Digest d;
        for (int i = 0; i < 8; ++i) store_be32(d.data() + 4 * i, out[i]);
        if (bitcoin_meets(d, plan_.target)) return n;
      }
      if (n == last) return no_hit;
    }
  }

 private:
  const MinePlan& plan_;
  Sha256Compress compress_;
  std::uint8_t block_[64] = {};
  std::uint8_t digest_block_[64] = {};
};

// Data: the tail (the STRING's last partial block, the digits, the padding) in one or two blocks;
// consecutive nonces change only the digits, so they are counted up in place.
class DataScanner {
 public:
  explicit DataScanner(const MinePlan& plan) : plan_(plan), compress_(best_sha256_compress()) {}

  std::uint64_t scan(std::uint64_t first, std::uint64_t last, const std::atomic<std::uint64_t>& lowest) {
    const std::uint32_t top = plan_.target.top_word();
    build(first);
    for (std::uint64_t n = first;; ++n) {
      if ((n & 1023) == 0 && n > lowest.load(std::memory_order_relaxed)) return no_hit;
      std::uint32_t state[8];
      std::memcpy(state, plan_.midstate.data(), sizeof state);
      for (int b = 0; b < blocks_; ++b) compress_(state, tail_ + 64 * b);
      if (state[0] <= top) {
        Sha256Digest d;
        for (int i = 0; i < 8; ++i) store_be32(d.data() + 4 * i, state[i]);
        if (data_meets(d, plan_.target)) return n;
      }
      if (n == last) return no_hit;
      if (!increment()) build(n + 1);
    }
  }

 private:
  // The tail for nonce n.
  void build(std::uint64_t n) {
    const std::string digits = std::to_string(n);
    const std::size_t used = plan_.prefix.size() + digits.size();
    blocks_ = used + 9 <= 64 ? 1 : 2;
    std::memset(tail_, 0, sizeof tail_);
    std::memcpy(tail_, plan_.prefix.data(), plan_.prefix.size());
    std::memcpy(tail_ + plan_.prefix.size(), digits.data(), digits.size());
    tail_[used] = 0x80;
    const std::uint64_t bits = 8 * (plan_.data.size() + digits.size());
    for (int i = 0; i < 8; ++i) tail_[64 * blocks_ - 1 - i] = static_cast<std::uint8_t>(bits >> (8 * i));
    digits_begin_ = plan_.prefix.size();
    digits_end_ = used;
  }

  // Adds one to the digits in place; false when they were all 9s (the length changes).
  bool increment() {
    for (std::size_t i = digits_end_; i-- > digits_begin_;) {
      if (tail_[i] != '9') {
        ++tail_[i];
        return true;
      }
      tail_[i] = '0';
    }
    return false;
  }

  const MinePlan& plan_;
  Sha256Compress compress_;
  std::uint8_t tail_[128] = {};
  int blocks_ = 1;
  std::size_t digits_begin_ = 0, digits_end_ = 0;
};

class CpuSearcher : public NonceSearcher {
 public:
  CpuSearcher(const MinePlan& plan, int threads)
      : plan_(plan), threads_(threads > 0 ? threads : omp_get_max_threads()), rate_(1e6 * threads_) {}

  std::string name() const override {
    return "cpu (" + std::to_string(threads_) + " threads, " + best_sha256_compress_name() + ")";
  }

  std::uint64_t chunk_size(double seconds) override {
    return std::max<std::uint64_t>(static_cast<std::uint64_t>(threads_) * 64,
                                   static_cast<std::uint64_t>(rate_ * seconds));
  }

  ChunkOutcome search(std::uint64_t first, std::uint64_t last, const std::function<bool()>& keep_going,
                      std::atomic<std::uint64_t>& hashes) override {
    if (!keep_going()) return {};
    const auto started = std::chrono::steady_clock::now();
    const ChunkOutcome outcome = scan_on_host(plan_, first, last, threads_);
    hashes += outcome.tested;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (seconds > 1e-3 && !outcome.found) rate_ = 0.5 * rate_ + 0.5 * static_cast<double>(outcome.tested) / seconds;
    return outcome;
  }

 private:
  const MinePlan& plan_;
  int threads_;
  double rate_;  // nonces per second, all threads
};

}  // namespace

ChunkOutcome scan_on_host(const MinePlan& plan, std::uint64_t first, std::uint64_t last, int threads) {
  const std::uint64_t size = last - first + 1;
  const int team = static_cast<int>(std::min<std::uint64_t>(threads > 0 ? threads : omp_get_max_threads(), size));
  std::atomic<std::uint64_t> lowest{no_hit};
#pragma omp parallel num_threads(team)
  {
    const auto t = static_cast<std::uint64_t>(omp_get_thread_num());
    const std::uint64_t run_first = first + size * t / team;
    const std::uint64_t run_last = first + size * (t + 1) / team - 1;
    const std::uint64_t hit = plan.scheme == PowScheme::bitcoin ? BitcoinScanner(plan).scan(run_first, run_last, lowest)
                                                                : DataScanner(plan).scan(run_first, run_last, lowest);
    if (hit != no_hit) {
      std::uint64_t seen = lowest.load();
      while (hit < seen && !lowest.compare_exchange_weak(seen, hit)) {
      }
    }
  }
  ChunkOutcome outcome;
  const std::uint64_t hit = lowest.load();
  if (hit != no_hit) outcome.found = hit;
  outcome.tested = outcome.found ? hit - first + 1 : size;
  return outcome;
}

std::unique_ptr<NonceSearcher> make_cpu_searcher(const MinePlan& plan, int threads) {
  return std::make_unique<CpuSearcher>(plan, threads);
}

}  // namespace opkit::ops::detail
