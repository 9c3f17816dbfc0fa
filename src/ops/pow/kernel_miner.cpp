// The device miner (see kernel_miner.hpp). Each launch reports the lowest offset whose hash
// passed the kernel's quick test of the top 32 bits; the host checks the whole hash and, in the
// rare case that only the top word matched, searches on from the next nonce.
#include "kernel_miner.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <optional>
#include <vector>

#include "core/compile_queue.hpp"
#include "cpu_miner.hpp"
#include "opkit/buffer.hpp"
#include "opkit/kernel.hpp"
#include "opkit/module.hpp"

namespace opkit::ops::detail {

using opkit::detail::CompileQueue;
namespace {

constexpr std::uint32_t no_candidate = 0xffffffffu;
// Offsets are 32-bit in the kernels, and each thread's last offset plus its stride must not wrap.
constexpr std::uint64_t max_launch = std::uint64_t{1} << 31;
// Keys of the kernel table: the generic kernel of either scheme, the specialised Bitcoin kernel;
// specialised data kernels go by their digit count.
constexpr int generic_key = -1;
constexpr int bitcoin_specialised = 0;

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

class KernelSearcher : public NonceSearcher {
 public:
  KernelSearcher(const MinePlan& plan, Device device, double launch_seconds, const PowKernelTuning& tuning,
                 int host_threads)
      : plan_(plan),
        device_(std::move(device)),
        launch_seconds_(launch_seconds),
        tuning_(tuning),
        host_threads_(host_threads),
        best_(device_.alloc<std::uint32_t>(1)) {
    // The CPU backend exists to run the kernel source: never stand in for it.
    if (!device_.is_gpu() && tuning_.kernel == PowKernelChoice::adaptive) tuning_.kernel = PowKernelChoice::specialised;
  }

  // The compiles this search started and did not wait for run on in the compile queue, which
  // owns them: a stop never waits for NVRTC, and the queue joins them at exit at the latest.
  ~KernelSearcher() override = default;
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
        if (digits < 20 && power_of_ten(digits) - 1 < last) start_compile(digits + 1);
      }
      const std::uint64_t n = std::min(after, launch_size() - 1) + 1;
      const Loaded* kernel = ready_kernel(digits);
      std::optional<std::uint64_t> candidate;
      if (kernel != nullptr) {
        const auto started = std::chrono::steady_clock::now();
        const std::uint32_t offset = launch(*kernel, at, n);
        note_rate(n, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        if (offset != no_candidate) candidate = at + offset;
      } else {
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
      hashes += n;
      if (candidate) {
        const std::uint64_t nonce = *candidate;
        outcome.tested = nonce - first + 1;
        if (plan_.meets(plan_.hash(nonce))) {
          outcome.found = nonce;
          return outcome;
        }
        // Only the top 32 bits met the target: go on after it.
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

  void start_compile(int key) {
    if (kernels_.count(key)) return;
    const bool generic = key == generic_key;
    Program program =
        pow_kernels().program(device_, {.plan = plan_, .generic = generic, .digits = key, .tuning = tuning_});
    const char* name = plan_.scheme == PowScheme::bitcoin ? "pow_bitcoin" : "pow_data";
    kernels_[key] = CompileQueue::global().submit([device = device_, program = std::move(program), name, generic] {
      return load(device, program, name, generic);
    });
  }

  // The kernel of `key` once compiled (rethrowing its compile error), waiting when `wait`.
  const Loaded* compiled(int key, bool wait) {
    start_compile(key);
    auto& compile = kernels_.at(key);
    if (!wait && compile.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return nullptr;
    return &compile.get();
  }

  // The kernel to launch now, or nullptr for a host step.
  const Loaded* ready_kernel(int digits) {
    const int specialised = plan_.scheme == PowScheme::data ? digits : bitcoin_specialised;
    switch (tuning_.kernel) {
      case PowKernelChoice::generic:
        return compiled(generic_key, true);
      case PowKernelChoice::specialised:
        return compiled(specialised, true);
      case PowKernelChoice::adaptive:
        break;
    }
    // Both compile at once; the generic one is usually in the disk cache already. Bitcoin mode
    // waits for it (its compile is the shorter); data mode mines on the host meanwhile.
    start_compile(specialised);
    if (const Loaded* k = compiled(specialised, false)) return k;
    return compiled(generic_key, plan_.scheme == PowScheme::bitcoin);
  }

  // Runs one launch over [at, at + n) and returns the lowest candidate offset.
  std::uint32_t launch(const Loaded& k, std::uint64_t at, std::uint64_t n) {
    const std::uint64_t threads = std::uint64_t{k.grid} * k.block;
    const auto count = static_cast<std::uint32_t>(n);
    // Nonces per thread: fixed on a GPU (the grid grows with the launch), else the launch split
    // over the resident threads.
    const bool waves = device_.is_gpu() && tuning_.nonces_per_thread > 0;
    const std::uint64_t split =
        waves ? static_cast<std::uint64_t>(tuning_.nonces_per_thread) : (n + threads - 1) / threads;
    best_.fill(no_candidate);
    if (plan_.scheme == PowScheme::bitcoin) {
      // Thread t tests t, t + stride, ...: the grid covers the launch in `split` strides.
      const std::uint64_t blocks = (n + split * k.block - 1) / (split * k.block);
      const auto grid =
          static_cast<std::uint32_t>(waves ? blocks : std::min<std::uint64_t>(k.grid, (n + k.block - 1) / k.block));
      const std::uint64_t stride = std::uint64_t{grid} * k.block;
      const auto per_thread = static_cast<std::uint32_t>((n + stride - 1) / stride);
      k.kernel.launch({.grid = grid, .block = k.block}, best_, bitcoin_job_args(plan_), static_cast<std::uint32_t>(at),
                      count, per_thread);
    } else {
      // A multiple of 10, so that the decimal carries of a warp's threads line up.
      const std::uint64_t per_thread = (split + 9) / 10 * 10;
      const std::uint64_t per_block = per_thread * k.block;
      const auto grid = static_cast<std::uint32_t>((n + per_block - 1) / per_block);
      if (k.generic) {
        k.kernel.launch({.grid = grid, .block = k.block}, best_, data_job_args(plan_, decimal_digits(at)),
                        static_cast<unsigned long long>(at), count, static_cast<std::uint32_t>(per_thread));
      } else {
        k.kernel.launch({.grid = grid, .block = k.block}, best_, static_cast<unsigned long long>(at), count,
                        static_cast<std::uint32_t>(per_thread));
      }
    }
    return best_.to_host()[0];
  }

  const MinePlan& plan_;
  Device device_;
  double launch_seconds_;
  PowKernelTuning tuning_;
  int host_threads_;
  DeviceBuffer<std::uint32_t> best_;
  std::map<int, std::shared_future<Loaded>> kernels_;
  double rate_ = 0;  // nonces per second once measured
  std::uint64_t probe_ = std::uint64_t{1} << 16;
};

}  // namespace

std::unique_ptr<NonceSearcher> make_kernel_searcher(const MinePlan& plan, Device device, double launch_seconds,
                                                    const PowKernelTuning& tuning, int host_threads) {
  return std::make_unique<KernelSearcher>(plan, std::move(device), launch_seconds, tuning, host_threads);
}

}  // namespace opkit::ops::detail
