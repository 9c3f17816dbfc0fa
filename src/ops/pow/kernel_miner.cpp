// The device miner (see kernel_miner.hpp). Each launch reports the lowest offset whose hash
// passed the kernel's quick test of the top 32 bits; the host checks the whole hash and, in the
// rare case that only the top word matched, searches on from the next nonce.
#include "ops/pow/kernel_miner.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <optional>

#include "opkit/buffer.hpp"
#include "opkit/kernel.hpp"
#include "opkit/module.hpp"

namespace opkit::ops::detail {
namespace {

constexpr std::uint32_t no_candidate = 0xffffffffu;
// Offsets are 32-bit in the kernels, and each thread's last offset plus its stride must not wrap.
constexpr std::uint64_t max_launch = std::uint64_t{1} << 31;

class KernelSearcher : public NonceSearcher {
 public:
  KernelSearcher(const MinePlan& plan, Device device, double launch_seconds, const PowKernelTuning& tuning)
      : plan_(plan),
        device_(std::move(device)),
        launch_seconds_(launch_seconds),
        tuning_(tuning),
        best_(device_.alloc<std::uint32_t>(1)) {}

  std::string name() const override { return device_.info().name; }

  std::uint64_t chunk_size(double seconds) override {
    if (rate_ <= 0) return probe_;
    return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(rate_ * seconds), 1024, max_launch);
  }

  ChunkOutcome search(std::uint64_t first, std::uint64_t last, const std::function<bool()>& keep_going,
                      std::atomic<std::uint64_t>& hashes) override {
    ChunkOutcome outcome;
    std::uint64_t at = first;
    while (keep_going()) {
      // One launch: [at, at + n - 1], within one digit count for the data scheme.
      std::uint64_t after = last - at;  // nonces after `at` in the chunk
      int digits = 0;
      if (plan_.scheme == PowScheme::data) {
        digits = decimal_digits(at);
        if (digits < 20) after = std::min(after, power_of_ten(digits) - 1 - at);
      }
      const std::uint64_t n = std::min(after, launch_size() - 1) + 1;
      const auto started = std::chrono::steady_clock::now();
      const std::uint32_t candidate = launch(at, n, digits);
      note_rate(n, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      hashes += n;
      if (candidate != no_candidate) {
        const std::uint64_t nonce = at + candidate;
        if (plan_.meets(plan_.hash(nonce))) {
          outcome.found = nonce;
          outcome.tested = nonce - first + 1;
          return outcome;
        }
        // Only the top 32 bits met the target: go on after it.
        outcome.tested = nonce - first + 1;
        if (nonce == last) return outcome;
        at = nonce + 1;
        continue;
      }
      outcome.tested = at - first + n;
      if (n - 1 == last - at) return outcome;
      at += n;
    }
    return outcome;
  }

 private:
  struct Loaded {
    Kernel kernel;
    std::uint32_t grid;
    std::uint32_t block;
  };

  // Until a launch lasts long enough to measure the rate, launches grow from a small probe.
  std::uint64_t launch_size() const {
    if (rate_ <= 0) return probe_;
    return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(rate_ * launch_seconds_), 1024, max_launch);
  }

  void note_rate(std::uint64_t n, double seconds) {
    if (seconds >= 5e-3) {
      const double measured = static_cast<double>(n) / seconds;
      rate_ = rate_ <= 0 ? measured : 0.5 * rate_ + 0.5 * measured;
    } else if (rate_ <= 0) {
      probe_ = std::min(probe_ * 4, max_launch);
    }
  }

  // Block and grid for one full wave on a GPU (from the kernel's register count), or a few
  // blocks per core on the CPU backend.
  Loaded load(const Program& program, const char* name) const {
    Kernel kernel = device_.compile(program).kernel(name);
    const DeviceInfo& info = device_.info();
    const int units = std::max(1, info.compute_units);
    if (!device_.is_gpu()) return {kernel, static_cast<std::uint32_t>(4 * units), 32};
    const std::uint32_t block = 256;
    const int registers = std::max(1, kernel.attributes().registers);
    const int per_sm = std::clamp(65536 / (((registers + 7) / 8 * 8) * static_cast<int>(block)), 1, 8);
    return {kernel, static_cast<std::uint32_t>(units * per_sm), block};
  }

  const Loaded& kernel_for(int digits) {
    auto it = kernels_.find(digits);
    if (it != kernels_.end()) return it->second;
    Loaded loaded = plan_.scheme == PowScheme::bitcoin ? load(bitcoin_program(plan_, tuning_), "pow_bitcoin")
                                                       : load(data_program(plan_, digits, tuning_), "pow_data");
    return kernels_.emplace(digits, std::move(loaded)).first->second;
  }

  // Runs one launch over [at, at + n) and returns the lowest candidate offset.
  std::uint32_t launch(std::uint64_t at, std::uint64_t n, int digits) {
    const Loaded& k = kernel_for(digits);
    const std::uint64_t threads = std::uint64_t{k.grid} * k.block;
    const auto count = static_cast<std::uint32_t>(n);
    best_.fill(no_candidate);
    if (plan_.scheme == PowScheme::bitcoin) {
      const auto per_thread = static_cast<std::uint32_t>((n + threads - 1) / threads);
      const auto grid = static_cast<std::uint32_t>(std::min<std::uint64_t>(k.grid, (n + k.block - 1) / k.block));
      k.kernel.launch({.grid = grid, .block = k.block}, best_, bitcoin_job_args(plan_), static_cast<std::uint32_t>(at),
                      count, per_thread);
    } else {
      // A multiple of 10, so that the decimal carries of a warp's threads line up.
      const std::uint64_t per_thread = ((n + threads - 1) / threads + 9) / 10 * 10;
      const std::uint64_t per_block = per_thread * k.block;
      const auto grid = static_cast<std::uint32_t>((n + per_block - 1) / per_block);
      k.kernel.launch({.grid = grid, .block = k.block}, best_, static_cast<unsigned long long>(at), count,
                      static_cast<std::uint32_t>(per_thread));
    }
    return best_.to_host()[0];
  }

  const MinePlan& plan_;
  Device device_;
  double launch_seconds_;
  PowKernelTuning tuning_;
  DeviceBuffer<std::uint32_t> best_;
  std::map<int, Loaded> kernels_;  // by digit count (0 for Bitcoin)
  double rate_ = 0;                // nonces per second once measured
  std::uint64_t probe_ = std::uint64_t{1} << 16;
};

}  // namespace

std::unique_ptr<NonceSearcher> make_kernel_searcher(const MinePlan& plan, Device device, double launch_seconds,
                                                    const PowKernelTuning& tuning) {
  return std::make_unique<KernelSearcher>(plan, std::move(device), launch_seconds, tuning);
}

}  // namespace opkit::ops::detail
