// SHA-256 throughput: the GPU kernels on device-resident random messages (full 32-byte digests
// written back to device memory), a sweep of kernel variants and launch shapes for 32-byte
// messages and sha256d, 64- and 1024-byte messages; and the host-CPU path (OpenSSL over all
// cores). Every GPU case is checked against the CPU path on its first and last 64 Ki messages.
// Prints a table; exits 1 if a GPU case computed a wrong digest.
//
// usage: opkit_sha256_bench [--cubins DIR] [--quick] [--only NAME] [--list] [--no-cpu]
//   --cubins DIR  also write each benchmarked GPU program's cubin to DIR/NAME.cubin (for
//                 tools/sass_count.py and tools/sass_banks.py)
//   --quick       smaller batches and fewer repetitions
//   --only NAME   only the GPU case NAME (as --list prints it), e.g. for a profiler
//   --list        print the GPU case names and exit
//   --no-cpu      skip the CPU rows
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "opkit/opkit.hpp"
#include "opkit/ops/sha256.hpp"

namespace {

using opkit::ops::HashAlgo;

// A kernel variant: the -D switches of src/ops/sha256/kernels/sha256_primitives.cuh and
// sha256_core.cuh it sets (the kernel's defaults for the others).
struct Variant {
  const char* name;
  std::vector<std::pair<const char*, int>> defines;
};

// "default" is what the library compiles; the others set both switches (the headers' top
// comments say what each does), so they do not move when the defaults do.
Variant make_variant(const char* name, int add_on_fma, int k_on_fma) {
  return {name, {{"SHA256_ADD_ON_FMA", add_on_fma}, {"SHA256_K_ON_FMA", k_on_fma}}};
}

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = {
      {"default", {}},
      make_variant("plain", 0, 0),  // every addition plain `+` (IADD3), as hashcat's kernels
      make_variant("kw", 1, 0),     // additions as IMAD, but h + K[t] + W[t] one IADD3
      make_variant("kwv", 1, 1),    // h + W[t] an IMAD, + K[t] a VIADD: no addition on the ALU pipe
  };
  return all;
}

const Variant& variant(const std::string& name) {
  for (const Variant& v : variants())
    if (name == v.name) return v;
  throw opkit::Error(opkit::Errc::invalid_argument, "sha256_bench", "no kernel variant " + name);
}

struct GpuCase {
  std::size_t len;
  HashAlgo algo;
  unsigned block, per_thread;
  std::string variant;
};

std::string case_name(const GpuCase& c) {
  return std::string(opkit::ops::hash_algo_name(c.algo)) + "_L" + std::to_string(c.len) + "_b" +
         std::to_string(c.block) + "_pt" + std::to_string(c.per_thread) + "_" + c.variant;
}

// The sweep: every variant on the headline case (32-byte sha256), launch shapes for the main
// candidates, sha256d of 32 bytes, then the other lengths.
std::vector<GpuCase> gpu_cases() {
  std::vector<GpuCase> cases;
  for (const Variant& v : variants()) cases.push_back({32, HashAlgo::sha256, 256, 1, v.name});
  for (const char* v : {"default"})
    for (auto [block, per_thread] : {std::pair{128u, 1u}, std::pair{512u, 1u}, std::pair{256u, 2u}})
      cases.push_back({32, HashAlgo::sha256, block, per_thread, v});
  for (const char* v : {"default", "kw", "plain"}) cases.push_back({32, HashAlgo::sha256d, 256, 1, v});
  for (const char* v : {"default", "kw", "plain"}) cases.push_back({64, HashAlgo::sha256, 256, 1, v});
  for (const char* v : {"default", "kw", "plain"}) cases.push_back({1024, HashAlgo::sha256, 256, 1, v});
  for (const char* v : {"default", "kw"}) cases.push_back({80, HashAlgo::sha256d, 256, 1, v});
  return cases;
}

std::string cubins_dir;
bool quick = false;

// Random bytes on the device, 4 GiB (enough for every case), and the 64 MiB host pattern they
// repeat: byte j of the pool is pattern[j % pattern.size()].
struct MessagePool {
  std::vector<std::uint8_t> pattern;
  opkit::DeviceBuffer<std::uint8_t> bytes;

  explicit MessagePool(const opkit::Device& gpu)
      : pattern(std::size_t{64} << 20),
        bytes(gpu.alloc<std::uint8_t>(quick ? std::size_t{256} << 20 : std::size_t{4} << 30)) {
    std::mt19937_64 rng(20261202);
    for (std::size_t i = 0; i < pattern.size(); i += 8) {
      const std::uint64_t r = rng();
      for (int k = 0; k < 8; ++k) pattern[i + k] = static_cast<std::uint8_t>(r >> (8 * k));
    }
    bytes.view().subview(0, pattern.size()).copy_from(std::span<const std::uint8_t>(pattern));
    for (std::size_t done = pattern.size(); done < bytes.size(); done *= 2) {
      const std::size_t n = std::min(done, bytes.size() - done);
      bytes.view().subview(done, n).copy_from(opkit::BufferView<const std::uint8_t>(bytes.view().subview(0, n)));
    }
    gpu.synchronize();
  }

  std::vector<std::uint8_t> host_bytes(std::size_t offset, std::size_t count) const {
    std::vector<std::uint8_t> out(count);
    for (std::size_t i = 0; i < count; ++i) out[i] = pattern[(offset + i) % pattern.size()];
    return out;
  }
};

// Digests of messages [first, first + n) computed on the GPU vs the CPU path; "" or what differs.
std::string check(const MessagePool& pool, const GpuCase& c, const opkit::DeviceBuffer<std::uint8_t>& digests,
                  std::size_t first, std::size_t n) {
  std::vector<std::uint8_t> got(n * 32), want(n * 32);
  digests.view().subview(first * 32, n * 32).copy_to(std::span<std::uint8_t>(got));
  const std::vector<std::uint8_t> data = pool.host_bytes(first * c.len, n * c.len);
  const opkit::ops::HashOptions on_cpu{.host_cpu = true};
  if (c.algo == HashAlgo::sha256)
    opkit::ops::sha256(data, c.len, want, on_cpu);
  else
    opkit::ops::sha256d(data, c.len, want, on_cpu);
  for (std::size_t i = 0; i < n; ++i)
    if (!std::equal(got.begin() + 32 * i, got.begin() + 32 * (i + 1), want.begin() + 32 * i))
      return "message " + std::to_string(first + i) + " has a wrong digest";
  return "";
}

// Runs one case; returns false if its digests are wrong.
bool run_gpu_case(const opkit::Device& gpu, const MessagePool& pool, const GpuCase& c) {
  opkit::Program program = opkit::ops::sha256_fixed_program(c.algo, c.len, 16, 16, c.per_thread);
  for (const auto& [macro, value] : variant(c.variant).defines) program.define(macro, value);
  const opkit::CompiledProgram compiled = gpu.build(program);
  if (!cubins_dir.empty())
    std::ofstream(cubins_dir + "/" + case_name(c) + ".cubin", std::ios::binary)
        .write(reinterpret_cast<const char*>(compiled.binary.data()),
               static_cast<std::streamsize>(compiled.binary.size()));
  opkit::Kernel kernel = gpu.load(compiled).kernel("sha256_fixed");

  // 2 GiB of messages for short ones (64 Mi of 32 bytes), 4 GiB of 1 KiB ones.
  const std::size_t count =
      std::min(pool.bytes.size(),
               quick ? std::size_t{1} << 27 : (c.len >= 1024 ? std::size_t{4} << 30 : std::size_t{2} << 30)) /
      std::max<std::size_t>(c.len, 32);
  auto digests = gpu.alloc<std::uint8_t>(count * 32);
  const opkit::BufferView<const std::uint8_t> data = pool.bytes.view().subview(0, count * c.len);
  const std::uint64_t per_block = std::uint64_t{c.block} * c.per_thread;
  const opkit::LaunchConfig config{.grid = static_cast<std::uint32_t>((count + per_block - 1) / per_block),
                                   .block = c.block};
  kernel.launch(config, data, digests, static_cast<unsigned long long>(count));  // warm up
  gpu.synchronize();

  opkit::Stream stream = gpu.default_stream();
  opkit::Event start = gpu.create_event(), stop = gpu.create_event();
  float best_ms = 1e30f;
  for (int r = 0; r < (quick ? 3 : 10); ++r) {
    start.record(stream);
    kernel.launch(config, data, digests, static_cast<unsigned long long>(count));
    stop.record(stream);
    stop.synchronize();
    best_ms = std::min(best_ms, opkit::Event::elapsed_ms(start, stop));
  }
  const std::size_t sample = std::min<std::size_t>(count / 2, 65536);
  std::string wrong = check(pool, c, digests, 0, sample);
  if (wrong.empty()) wrong = check(pool, c, digests, count - sample, sample);

  const double hashes_per_s = static_cast<double>(count) / (best_ms * 1e-3);
  std::printf("gpu  %-8s %6zu %6u %4u  %-8s %10.3f %10.2f %9.1f  %s\n", opkit::ops::hash_algo_name(c.algo), c.len,
              c.block, c.per_thread, c.variant.c_str(), best_ms, hashes_per_s / 1e9,
              hashes_per_s * static_cast<double>(c.len) / 1e9, wrong.empty() ? "ok" : "WRONG");
  if (!wrong.empty()) std::printf("# %s: %s\n", case_name(c).c_str(), wrong.c_str());
  std::fflush(stdout);
  return wrong.empty();
}

void run_cpu_case(std::size_t len, HashAlgo algo) {
  const std::size_t count = (quick ? std::size_t{64} << 20 : std::size_t{512} << 20) / std::max<std::size_t>(len, 32);
  std::vector<std::uint8_t> data(count * len, 0x5a), digests(count * 32);
  const opkit::ops::HashOptions on_cpu{.host_cpu = true};
  auto hash = [&] {
    if (algo == HashAlgo::sha256)
      opkit::ops::sha256(data, len, digests, on_cpu);
    else
      opkit::ops::sha256d(data, len, digests, on_cpu);
  };
  hash();
  double best_s = 1e30;
  for (int r = 0; r < (quick ? 2 : 5); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    hash();
    best_s = std::min(best_s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const double hashes_per_s = static_cast<double>(count) / best_s;
  std::printf("cpu  %-8s %6zu %6d %4d  %-8s %10.3f %10.4f %9.2f  -\n", opkit::ops::hash_algo_name(algo), len,
              omp_get_max_threads(), 1, "openssl", best_s * 1e3, hashes_per_s / 1e9,
              hashes_per_s * static_cast<double>(len) / 1e9);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string only;
  bool list = false, cpu = true;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--cubins" && i + 1 < argc)
      cubins_dir = argv[++i];
    else if (arg == "--only" && i + 1 < argc)
      only = argv[++i];
    else if (arg == "--quick")
      quick = true;
    else if (arg == "--list")
      list = true;
    else if (arg == "--no-cpu")
      cpu = false;
    else {
      std::fprintf(stderr, "usage: %s [--cubins DIR] [--quick] [--only NAME] [--list] [--no-cpu]\n", argv[0]);
      return 2;
    }
  }
  if (list) {
    for (const GpuCase& c : gpu_cases()) std::printf("%s\n", case_name(c).c_str());
    return 0;
  }
  bool all_right = true;
  try {
    std::printf("%-4s %-8s %6s %6s %4s  %-8s %10s %10s %9s  %s\n", "dev", "algo", "L", "block", "pt", "variant", "ms",
                "GH/s", "GB/s", "check");
    auto gpus = opkit::Device::all("cuda");
    if (gpus.empty()) {
      std::printf("# no CUDA GPU: GPU rows skipped\n");
    } else {
      const opkit::Device& gpu = gpus.front();
      std::printf("# %s, %d SMs, peak clock %d MHz\n", gpu.info().name.c_str(), gpu.info().compute_units,
                  gpu.info().clock_khz / 1000);
      std::vector<GpuCase> cases = gpu_cases();
      if (!only.empty()) {
        std::erase_if(cases, [&](const GpuCase& c) { return case_name(c) != only; });
        if (cases.empty()) throw opkit::Error(opkit::Errc::invalid_argument, "sha256_bench", "no GPU case " + only);
      }
      const MessagePool pool(gpu);
      for (const GpuCase& c : cases) all_right = run_gpu_case(gpu, pool, c) && all_right;
    }
    if (cpu && only.empty())
      for (std::size_t len : {32, 64, 1024, 16384}) run_cpu_case(len, HashAlgo::sha256);
  } catch (const opkit::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return all_right ? 0 : 1;
}
