// Proof-of-work rates: Bitcoin mode on each GPU (generic kernel, per-job specialised kernel and
// its code-generation variants), what a fresh job costs end to end (compile included), data
// mode for a 20- and a 100-byte STRING, and the CPU miner per core and on all cores.
//
// Method: each rate is the best of three timed searches over a range with an unreachable target
// (every nonce is hashed), after an untimed search that compiles the kernel and calibrates the
// launch size. GPU rates are whole searches as the library runs them: launches of ~0.1 s, the
// host reading each launch's result.
//
//   opkit_pow_bench                 run everything (GPU rows skipped without a GPU)
//   opkit_pow_bench --cubins DIR    only write the NVRTC cubins of every variant (no GPU needed)
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "opkit/nvrtc.hpp"
#include "opkit/opkit.hpp"
#include "opkit/ops/pow.hpp"
#include "ops/pow/cpu_miner.hpp"
#include "ops/pow/kernel_miner.hpp"
#include "ops/pow/kernel_programs.hpp"
#include "ops/pow/mine_plan.hpp"

namespace {

using namespace opkit;
using namespace opkit::ops;
namespace detail = opkit::ops::detail;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A header that changes every run, so that its specialised kernel is never in the disk cache.
BlockHeader fresh_header() {
  std::random_device entropy;
  std::mt19937_64 rng((std::uint64_t{entropy()} << 32) ^ entropy() ^
                      static_cast<std::uint64_t>(Clock::now().time_since_epoch().count()));
  BlockHeader h;
  for (auto& b : h.bytes) b = static_cast<std::uint8_t>(rng());
  return h;
}

detail::MinePlan bitcoin_plan(const BlockHeader& header) {
  BitcoinJob job;
  job.header = header;
  job.target = ops::Target::from_hex(std::string(63, '0') + "1");  // unreachable: every nonce is hashed
  return detail::make_plan(job);
}

detail::MinePlan data_plan(std::size_t length) {
  DataJob job{std::string(length, 'd'), 255, 0, std::nullopt};
  return detail::make_plan(job);
}

// Best of three: nonces per second of `search(first, count)`.
double best_rate(const std::function<void(std::uint64_t, std::uint64_t)>& search, std::uint64_t first,
                 std::uint64_t count) {
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    const auto t = Clock::now();
    search(first, count);
    best = std::max(best, static_cast<double>(count) / seconds_since(t));
  }
  return best;
}

// Rate of one kernel choice on a device over [first, first + count).
double kernel_rate(const detail::MinePlan& plan, const Device& device, const detail::PowKernelTuning& tuning,
                   std::uint64_t first, std::uint64_t count) {
  auto engine = detail::make_kernel_searcher(plan, device, 0.1, tuning);
  std::atomic<std::uint64_t> hashes{0};
  auto go = [] { return true; };
  auto search = [&](std::uint64_t f, std::uint64_t n) { engine->search(f, f + n - 1, go, hashes); };
  search(first, std::min<std::uint64_t>(count, std::uint64_t{1} << 30));  // compile and calibrate
  return best_rate(search, first, count);
}

double host_rate(const detail::MinePlan& plan, int threads, std::uint64_t first, std::uint64_t count) {
  auto search = [&](std::uint64_t f, std::uint64_t n) { detail::scan_on_host(plan, f, f + n - 1, threads); };
  search(first, count / 8);
  return best_rate(search, first, count);
}

std::string rate_text(double rate) {
  char text[32];
  if (rate >= 1e9) {
    std::snprintf(text, sizeof text, "%.2f GH/s", rate / 1e9);
  } else {
    std::snprintf(text, sizeof text, "%.1f MH/s", rate / 1e6);
  }
  return text;
}

struct Variant {
  const char* name;
  const char* cubin;  // file name for --cubins
  detail::PowKernelTuning tuning;
};

// The default tuning with one thing changed.
detail::PowKernelTuning tuned(detail::PowKernelChoice kernel,
                              const std::function<void(detail::PowKernelTuning&)>& change) {
  detail::PowKernelTuning t;
  t.kernel = kernel;
  change(t);
  return t;
}

std::vector<Variant> bitcoin_variants() {
  using detail::PowKernelChoice;
  using T = detail::PowKernelTuning;
  const auto spec = PowKernelChoice::specialised;
  std::vector<Variant> v;
  v.push_back(
      {"generic kernel (one compile for every job)", "bitcoin_generic", tuned(PowKernelChoice::generic, [](T&) {})});
  v.push_back({"specialised (default: constants by VIADD, ALU shifts, 8 blocks/SM, 64 nonces/thread)",
               "bitcoin_default", tuned(spec, [](T&) {})});
  v.push_back({"specialised, constants in IADD3 (the second session's default)", "bitcoin_const_iadd3",
               tuned(spec, [](T& t) { t.const_in_iadd3 = true; })});
  v.push_back({"specialised, every addition as IMAD (the first runs' default)", "bitcoin_const_fma",
               tuned(spec, [](T& t) { t.const_add_on_fma = true; })});
  v.push_back({"specialised, 40 regs (6 blocks/SM), 64 nonces/thread", "bitcoin_40regs",
               tuned(spec, [](T& t) { t.min_blocks = 0; })});
  v.push_back({"specialised, 256 nonces/thread", "bitcoin_256_per_thread",
               tuned(spec, [](T& t) { t.nonces_per_thread = 256; })});
  return v;
}

int write_cubins(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const auto plan = bitcoin_plan(fresh_header());
  auto write = [&](const std::string& name, const Program& program) {
    const auto t = Clock::now();
    const CompiledProgram compiled = opkit::compile(program, opkit::Target::cuda("sm_90"));
    std::ofstream(dir + "/" + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(compiled.binary.data()),
               static_cast<std::streamsize>(compiled.binary.size()));
    std::printf("%-28s %s, NVRTC %.2f s\n", name.c_str(), binary_format_name(compiled.format).c_str(),
                seconds_since(t));
  };
  // Launch-only variants share their code with the default; they are skipped here.
  for (const Variant& v : bitcoin_variants()) {
    const std::string cubin = v.cubin;
    if (cubin == "bitcoin_40regs" || cubin.find("per_thread") != std::string::npos) continue;
    const bool specialised = v.tuning.kernel != detail::PowKernelChoice::generic;
    write(cubin + ".cubin", detail::bitcoin_program(plan, specialised, v.tuning));
  }
  write("data_20_bytes.cubin", detail::data_program(data_plan(20), 12, {}));
  write("data_100_bytes.cubin", detail::data_program(data_plan(100), 12, {}));
  write("data_generic.cubin", detail::data_generic_program({}));
  return 0;
}

void gpu_rows(const Device& gpu) {
  const DeviceInfo& info = gpu.info();
  std::printf("\n## %s (%s, %d SMs, %d MHz)\n\n", info.name.c_str(), info.arch.c_str(), info.compute_units,
              info.clock_khz / 1000);
  std::printf("| Bitcoin mode, 2^32 nonces | rate |\n|---|---|\n");
  const auto plan = bitcoin_plan(fresh_header());
  double generic = 0, specialised = 0;
  for (const Variant& v : bitcoin_variants()) {
    const double rate = kernel_rate(plan, gpu, v.tuning, 0, std::uint64_t{1} << 32);
    std::printf("| %s | %s |\n", v.name, rate_text(rate).c_str());
    if (v.tuning.kernel == detail::PowKernelChoice::generic) generic = rate;
    if (std::string(v.cubin) == "bitcoin_default") specialised = rate;
  }

  // What per-job specialisation costs and when it pays.
  const auto fresh = bitcoin_plan(fresh_header());
  auto t = Clock::now();
  gpu.compile(detail::bitcoin_program(fresh, true, {}));
  const double compile_s = seconds_since(t);
  std::printf("\nspecialised kernel compile (NVRTC, new job, cold cache): %.2f s\n", compile_s);
  if (specialised > generic) {
    const double saved_per_nonce = 1 / generic - 1 / specialised;
    std::printf(
        "specialisation: %+.1f%% rate; pays after %.3g nonces (%.1f s of generic mining) or on a cached "
        "(repeated) job\n",
        100 * (specialised / generic - 1), compile_s / saved_per_nonce, compile_s / saved_per_nonce / generic);
  } else {
    std::printf("specialisation: %+.1f%% rate: does not pay\n", 100 * (specialised / generic - 1));
  }

  // A fresh job end to end through the public API: generic kernel at once, specialised when ready.
  BitcoinJob job;
  job.header = fresh_header();
  job.target = ops::Target::from_hex(std::string(63, '0') + "1");
  MineOptions options;
  options.devices = {gpu};
  t = Clock::now();
  const MineResult r = mine(job, options);
  std::printf("fresh job, whole 32-bit range via opkit::ops::mine: %.2f s wall, %s\n", seconds_since(t),
              rate_text(static_cast<double>(r.hashes) / r.seconds).c_str());

  std::printf("\n| Data mode, 12-digit nonces | rate |\n|---|---|\n");
  for (std::size_t length : {20u, 100u}) {
    detail::PowKernelTuning tuning;
    tuning.kernel = detail::PowKernelChoice::specialised;
    const double rate = kernel_rate(data_plan(length), gpu, tuning, 100'000'000'000ull, std::uint64_t{1} << 34);
    std::printf("| %zu-byte STRING | %s |\n", length, rate_text(rate).c_str());
  }
  {
    // What mines while a new job's kernel compiles.
    detail::PowKernelTuning tuning;
    tuning.kernel = detail::PowKernelChoice::generic;
    const double rate = kernel_rate(data_plan(20), gpu, tuning, 100'000'000'000ull, std::uint64_t{1} << 33);
    std::printf("| generic data kernel (any job), 20 bytes | %s |\n", rate_text(rate).c_str());
  }
}

void cpu_rows() {
  const int threads = omp_get_max_threads();
  std::printf("\n## CPU miner (%s, %d threads)\n\n| | 1 thread | %d threads | per core |\n|---|---|---|---|\n",
              detail::best_sha256_compress_name(), threads, threads);
  struct Row {
    const char* name;
    detail::MinePlan plan;
    std::uint64_t first;
  };
  const Row rows[] = {{"Bitcoin mode", bitcoin_plan(fresh_header()), 0},
                      {"data, 20-byte STRING", data_plan(20), 100'000'000'000ull},
                      {"data, 100-byte STRING", data_plan(100), 100'000'000'000ull}};
  for (const Row& row : rows) {
    const double one = host_rate(row.plan, 1, row.first, std::uint64_t{1} << 22);
    const double all = host_rate(row.plan, threads, row.first, std::uint64_t{1} << 24);
    std::printf("| %s | %s | %s | %s |\n", row.name, rate_text(one).c_str(), rate_text(all).c_str(),
                rate_text(all / threads).c_str());
  }
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc == 3 && std::string(argv[1]) == "--cubins") return write_cubins(argv[2]);
  if (argc != 1) {
    std::fprintf(stderr, "usage: opkit_pow_bench [--cubins DIR]\n");
    return 2;
  }
  std::printf("# opkit proof-of-work benchmark (opkit %s)\n", opkit::version);
  const std::vector<Device> gpus = Device::all("cuda");
  if (gpus.empty()) std::printf("\nno CUDA GPU: GPU rows skipped\n");
  for (const Device& gpu : gpus) gpu_rows(gpu);
  if (gpus.size() > 1) {
    BitcoinJob job;
    job.header = fresh_header();
    job.target = ops::Target::from_hex(std::string(63, '0') + "1");
    mine(job);  // compiles
    const MineResult r = mine(job);
    std::printf("\nall %zu GPUs, Bitcoin mode, 2^32 nonces: %s\n", gpus.size(),
                rate_text(static_cast<double>(r.hashes) / r.seconds).c_str());
  }
  cpu_rows();
  return 0;
} catch (const opkit::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
