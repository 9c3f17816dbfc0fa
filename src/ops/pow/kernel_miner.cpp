// The device miner (see kernel_miner.hpp). Each launch reports every offset whose hash passed the
// kernel's quick test of the top 32 bits (launch_candidates.hpp); the host checks each one's whole
// hash and moves on, so no nonce is hashed twice unless a launch's candidates overflow its buffer.
#include "kernel_miner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "core/compile_queue.hpp"
#include "cpu_miner.hpp"
#include "launch_candidates.hpp"
#include "opkit/buffer.hpp"
#include "opkit/error.hpp"
#include "opkit/kernel.hpp"
#include "opkit/module.hpp"

namespace opkit::ops::detail {

using opkit::detail::CompileQueue;
using opkit::detail::QueuedJob;
namespace {

// Offsets are 32-bit in the kernels, and each thread's last offset plus its stride must not wrap.
constexpr std::uint64_t max_launch = std::uint64_t{1} << 31;
// Keys of the kernel table: the generic kernel of either scheme, the specialised Bitcoin kernel;
// specialised data kernels go by their digit count.
constexpr int generic_key = -1;
constexpr int bitcoin_specialised = 0;
// An overflowed launch's unresolved nonces are searched again in this many pieces, each with its
// own candidate buffer (and, should that overflow too, split again).
constexpr std::uint64_t overflow_pieces = 16;

struct Loaded {
  Kernel kernel;
  std::uint32_t grid;
  std::uint32_t block;
  bool generic;  // takes the job as an argument
};

// Block and grid for one full wave, as the kernel set's launch shape for the device says (on a
// GPU: from the kernel's register count).
Loaded load(const Device& device, const Program& program, const char* name, bool generic) {
  Kernel kernel = device.compile(program).kernel(name);
  const LaunchShape& shape = pow_kernels().on(device).shape;
  return {kernel, full_wave_blocks(kernel, shape), shape.block, generic};
}

// A kernel of the table: compiled here, or on the compile queue (then owned by the searcher).
struct KernelEntry {
  std::optional<Loaded> loaded;
  std::optional<QueuedJob<Loaded>> queued;
};

// Nonces to the first hit on average: 1 / P(hash <= target), from the target's top 64 bits.
double expected_nonces(const MinePlan& plan) {
  double top = 0;
  for (int i = 0; i < 8; ++i) top = top * 256 + plan.target.bytes[static_cast<std::size_t>(i)];
  return std::ldexp(1.0, 64) / (top + 1);
}

class KernelSearcher : public NonceSearcher {
 public:
  KernelSearcher(const MinePlan& plan, Device device, double launch_seconds, const PowKernelTuning& tuning,
                 int host_threads)
      : plan_(plan),
        device_(std::move(device)),
        launch_seconds_(launch_seconds),
        tuning_(tuning),
        host_threads_(host_threads),
        found_(device_.alloc<std::uint32_t>(candidate_header_words + tuning.candidate_slots)) {
    if (tuning_.candidate_slots < 1) throw Error(Errc::invalid_argument, "mine", "candidate_slots must be >= 1");
    // The CPU backend exists to run the kernel source: never stand in for it.
    if (!device_.is_gpu() && tuning_.kernel == PowKernelChoice::adaptive) tuning_.kernel = PowKernelChoice::specialised;
  }

  // The searcher owns the compiles it queued: ones not started are dropped, a running one is
  // waited for (NVRTC cannot be interrupted), so that none is left running when the search
  // returns, nor at exit (core/compile_queue.hpp says why that crashes).
  ~KernelSearcher() override {
    for (auto& [key, entry] : kernels_)
      if (entry.queued) entry.queued->cancel_or_wait();
  }
  KernelSearcher(const KernelSearcher&) = delete;
  KernelSearcher& operator=(const KernelSearcher&) = delete;

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
      // One step: [at, at + n - 1], within one digit count for the data scheme.
      std::uint64_t after = last - at;  // nonces after `at` in the chunk
      int digits = 0;
      if (plan_.scheme == PowScheme::data) {
        digits = decimal_digits(at);
        if (digits < 20) after = std::min(after, power_of_ten(digits) - 1 - at);
        // The next digit count's kernel compiles while this one runs.
        if (digits < 20 && power_of_ten(digits) - 1 < last && specialising(at)) start_compile(digits + 1);
      }
      const std::uint64_t n = std::min(after, launch_size() - 1) + 1;
      const Loaded* kernel = ready_kernel(digits, at);
      if (kernel == nullptr) {
        // No kernel yet (a data-mode kernel is compiling): the host mines this step. Its hits
        // are already checked in full.
        const ChunkOutcome host =
            scan_on_host(plan_, at, at + (std::min<std::uint64_t>(n, host_step()) - 1), host_threads_);
        hashes += host.tested;
        if (host.found) {
          outcome.found = host.found;
          outcome.tested = *host.found - first + 1;
          return outcome;
        }
        outcome.tested = at - first + host.tested;
        if (host.tested - 1 == last - at) return outcome;
        at += host.tested;
        continue;
      }
      const auto started = std::chrono::steady_clock::now();
      const std::optional<std::uint64_t> found = search_launch(*kernel, at, n, outcome.rehashed);
      note_rate(n, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      hashes += n;
      if (found) {
        outcome.found = found;
        outcome.tested = *found - first + 1;
        return outcome;
      }
      outcome.tested = at - first + n;
      if (n - 1 == last - at) return outcome;
      at += n;
    }
    return outcome;
  }

 private:
  // Until a launch lasts long enough to measure the rate, launches grow from a small probe.
  std::uint64_t launch_size() const {
    if (rate_ <= 0) return probe_;
    return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(rate_ * launch_seconds_), 1024, max_launch);
  }

  // About launch_seconds of host mining (at ~10 M nonces/s per core, a safe under-estimate).
  std::uint64_t host_step() const {
    return std::max<std::uint64_t>(1u << 16, static_cast<std::uint64_t>(launch_seconds_ * 1e7));
  }

  void note_rate(std::uint64_t n, double seconds) {
    if (seconds >= 5e-3) {
      const double measured = static_cast<double>(n) / seconds;
      rate_ = rate_ <= 0 ? measured : 0.5 * rate_ + 0.5 * measured;
    } else if (rate_ <= 0) {
      probe_ = std::min(probe_ * 4, max_launch);
    }
  }

  // Data mode: whether the job's specialised kernels are wanted, from `at` on. Adaptive: once the
  // measured rate says the rest of the search (to the expected hit, or the range's end) will
  // outlast tuning.specialise_after_seconds; then for the rest of the search.
  bool specialising(std::uint64_t at) {
    if (tuning_.kernel != PowKernelChoice::adaptive) return tuning_.kernel == PowKernelChoice::specialised;
    if (!specialising_ && rate_ > 0) {
      const double rest = std::min(expected_nonces(plan_), static_cast<double>(plan_.last - at) + 1);
      specialising_ = rest / rate_ > tuning_.specialise_after_seconds;
    }
    return specialising_;
  }

  Program program_of(int key) const {
    return pow_kernels().program(device_,
                                 {.plan = plan_, .generic = key == generic_key, .digits = key, .tuning = tuning_});
  }
  const char* kernel_name() const { return plan_.scheme == PowScheme::bitcoin ? "pow_bitcoin" : "pow_data"; }

  // Queues the kernel of `key` unless it is compiled or queued already.
  void start_compile(int key) {
    if (kernels_.count(key)) return;
    kernels_[key].queued =
        CompileQueue::global().submit([device = device_, program = program_of(key), name = kernel_name(),
                                       generic = key == generic_key] { return load(device, program, name, generic); });
  }

  // The kernel of `key`, compiled on this thread (or, when queued, waited for), rethrowing its
  // compile error.
  const Loaded* compiled_now(int key) {
    const auto it = kernels_.find(key);
    if (it != kernels_.end() && it->second.loaded) return &*it->second.loaded;
    // Not entered in the table until compiled: a failed compile leaves no half entry behind.
    Loaded kernel = it != kernels_.end() ? it->second.queued->get()
                                         : load(device_, program_of(key), kernel_name(), key == generic_key);
    KernelEntry& entry = kernels_[key];
    entry.loaded = std::move(kernel);
    return &*entry.loaded;
  }

  // The kernel of `key` if its queued compile has ended (started now if it was not).
  const Loaded* compiled_if_ready(int key) {
    start_compile(key);
    KernelEntry& entry = kernels_.at(key);
    if (!entry.loaded && !entry.queued->ready()) return nullptr;
    return compiled_now(key);
  }

  // The kernel to launch now, or nullptr for a host step.
  const Loaded* ready_kernel(int digits, std::uint64_t at) {
    const int specialised = plan_.scheme == PowScheme::data ? digits : bitcoin_specialised;
    switch (tuning_.kernel) {
      case PowKernelChoice::generic:
        return compiled_now(generic_key);
      case PowKernelChoice::specialised:
        return compiled_now(specialised);
      case PowKernelChoice::adaptive:
        break;
    }
    // Bitcoin: the generic kernel only, compiled here (kernel_programs.hpp says why).
    if (plan_.scheme == PowScheme::bitcoin) return compiled_now(generic_key);
    // Data: the specialised kernel once it pays and is ready; the generic one meanwhile, or the
    // host while that one compiles (a cold disk cache).
    if (specialising(at))
      if (const Loaded* k = compiled_if_ready(specialised)) return k;
    return compiled_if_ready(generic_key);
  }

  // The lowest qualifying nonce of [at, at + n), by one launch and the host's check of its
  // candidates. After an overflow the unresolved nonces are searched again in pieces; those
  // are added to `rehashed`.
  std::optional<std::uint64_t> search_launch(const Loaded& k, std::uint64_t at, std::uint64_t n,
                                             std::uint64_t& rehashed) {
    const CandidateVerdict verdict = check_candidates(
        launch(k, at, n), at, n, [this](std::uint64_t nonce) { return plan_.meets(plan_.hash(nonce)); });
    if (!verdict.unresolved) return verdict.found;
    const auto [from, end] = *verdict.unresolved;
    const std::uint64_t piece = (end - from + overflow_pieces - 1) / overflow_pieces;
    for (std::uint64_t p = from; p < end; p += piece) {
      const std::uint64_t m = std::min(piece, end - p);
      rehashed += m;
      if (const auto found = search_launch(k, p, m, rehashed)) return found;
    }
    return verdict.found;
  }

  // Runs one launch over [at, at + n) and returns its candidates.
  LaunchCandidates launch(const Loaded& k, std::uint64_t at, std::uint64_t n) {
    const std::uint64_t threads = std::uint64_t{k.grid} * k.block;
    const auto count = static_cast<std::uint32_t>(n);
    const std::uint32_t slots = tuning_.candidate_slots;
    // Nonces per thread: fixed on a GPU (the grid grows with the launch), else the launch split
    // over the resident threads.
    const bool waves = device_.is_gpu() && tuning_.nonces_per_thread > 0;
    const std::uint64_t split =
        waves ? static_cast<std::uint64_t>(tuning_.nonces_per_thread) : (n + threads - 1) / threads;
    const std::vector<std::uint32_t> empty = empty_candidates(slots);
    found_.copy_from(empty);
    if (plan_.scheme == PowScheme::bitcoin) {
      // Thread t tests t, t + stride, ...: the grid covers the launch in `split` strides.
      const std::uint64_t blocks = (n + split * k.block - 1) / (split * k.block);
      const auto grid =
          static_cast<std::uint32_t>(waves ? blocks : std::min<std::uint64_t>(k.grid, (n + k.block - 1) / k.block));
      const std::uint64_t stride = std::uint64_t{grid} * k.block;
      const auto per_thread = static_cast<std::uint32_t>((n + stride - 1) / stride);
      k.kernel.launch({.grid = grid, .block = k.block}, found_, slots, bitcoin_job_args(plan_, tuning_),
                      static_cast<std::uint32_t>(at), count, per_thread);
    } else {
      // A multiple of 10, so that the decimal carries of a warp's threads line up.
      const std::uint64_t per_thread = (split + 9) / 10 * 10;
      const std::uint64_t per_block = per_thread * k.block;
      const auto grid = static_cast<std::uint32_t>((n + per_block - 1) / per_block);
      if (k.generic) {
        k.kernel.launch({.grid = grid, .block = k.block}, found_, slots,
                        data_job_args(plan_, decimal_digits(at), tuning_), static_cast<unsigned long long>(at), count,
                        static_cast<std::uint32_t>(per_thread));
      } else {
        k.kernel.launch({.grid = grid, .block = k.block}, found_, slots, static_cast<unsigned long long>(at), count,
                        static_cast<std::uint32_t>(per_thread));
      }
    }
    return LaunchCandidates::read(found_.to_host());
  }

  const MinePlan& plan_;
  Device device_;
  double launch_seconds_;
  PowKernelTuning tuning_;
  int host_threads_;
  DeviceBuffer<std::uint32_t> found_;  // the candidate buffer, [count, lowest, slots...]
  std::map<int, KernelEntry> kernels_;
  bool specialising_ = false;
  double rate_ = 0;  // nonces per second once measured
  std::uint64_t probe_ = std::uint64_t{1} << 16;
};

}  // namespace

std::unique_ptr<NonceSearcher> make_kernel_searcher(const MinePlan& plan, Device device, double launch_seconds,
                                                    const PowKernelTuning& tuning, int host_threads) {
  return std::make_unique<KernelSearcher>(plan, std::move(device), launch_seconds, tuning, host_threads);
}

}  // namespace opkit::ops::detail
