// SHA-256 of 64-byte messages on the CPU backend (the real kernel source of src/ops/sha256 run
// through the backend's shim), against the same compression core compiled as plain C++ (a loop,
// OpenMP over the same number of threads), OpenSSL (opkit's host path), and the GPU when there
// is one. Every path's digests are checked against OpenSSL's. Prints one row per path.
//
// usage: opkit_cpu_backend_bench [--quick]
// The CPU backend uses $OPKIT_CPU_THREADS workers (default: all hardware threads); the plain C++
// loop uses as many OpenMP threads, so run with OPKIT_CPU_THREADS=1 for single-thread numbers.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backend/cpu/worker_pool.hpp"
#include "opkit/opkit.hpp"
#include "opkit/ops/sha256.hpp"
#include "ops/sha256/kernels/sha256_core.cuh"

namespace {

constexpr std::size_t kLen = 64;

// Two compressions: the message block, then the padding block (0x80, zeros, bit length 512).
void plain_sha256_64(const std::uint8_t* m, std::uint8_t* out) {
  unsigned int state[8], w[16];
  sha256_init(state);
  for (int j = 0; j < 16; ++j)
    w[j] = (unsigned{m[4 * j]} << 24) | (unsigned{m[4 * j + 1]} << 16) | (unsigned{m[4 * j + 2]} << 8) | m[4 * j + 3];
  sha256_compress(state, w);
  for (int j = 0; j < 16; ++j) w[j] = 0;
  w[0] = 0x80000000u;
  w[15] = 512;
  sha256_compress(state, w);
  for (int j = 0; j < 8; ++j)
    for (int k = 0; k < 4; ++k) out[4 * j + k] = static_cast<std::uint8_t>(state[j] >> (24 - 8 * k));
}

double best_seconds(int reps, const std::function<void()>& run) {
  run();  // warm up (and compile, for the kernel paths)
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (argc > 2 || (argc == 2 && !quick)) {
    std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
    return 2;
  }
  try {
    const std::size_t count = quick ? std::size_t{1} << 17 : std::size_t{1} << 22;
    const int reps = quick ? 2 : 5;
    std::vector<std::uint8_t> data(count * kLen), expected(count * 32);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 2654435761u >> 13);
    opkit::ops::sha256(data, kLen, expected, {.host_cpu = true});

    opkit::Device cpu = opkit::Device::cpu();
    const unsigned workers = opkit::cpu::WorkerPool::instance().size();
    omp_set_num_threads(static_cast<int>(workers));
    std::printf("# %zu messages of %zu bytes; %s; CPU backend workers = OpenMP threads = %u\n", count, kLen,
                cpu.info().name.c_str(), workers);
    std::printf("%-34s %8s %10s %10s %s\n", "path", "threads", "ms", "MH/s", "vs plain C++");
    int failures = 0;
    double plain_rate = 0;
    auto row = [&](const char* path, const std::string& threads, double seconds, const std::vector<std::uint8_t>& got) {
      const double rate = static_cast<double>(count) / seconds;
      if (plain_rate == 0) plain_rate = rate;
      bool ok = got == expected;
      failures += ok ? 0 : 1;
      std::printf("%-34s %8s %10.2f %10.2f %8.2fx%s\n", path, threads.c_str(), seconds * 1e3, rate / 1e6,
                  rate / plain_rate, ok ? "" : "  DIGESTS DIFFER FROM OPENSSL");
      std::fflush(stdout);
    };

    std::vector<std::uint8_t> digests(count * 32);
    double plain = best_seconds(reps, [&] {
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < count; ++i) plain_sha256_64(&data[i * kLen], &digests[i * 32]);
    });
    row("plain C++ (sha256_core.cuh, -O3)", std::to_string(workers), plain, digests);

    auto in = cpu.alloc<std::uint8_t>(data.size());
    auto out = cpu.alloc<std::uint8_t>(count * 32);
    in.copy_from(data);
    opkit::ops::Sha256Kernel kernel(cpu);
    double backend = best_seconds(reps, [&] {
      kernel.fixed(opkit::ops::HashAlgo::sha256, in, kLen, out);
      cpu.synchronize();
    });
    row("CPU backend (sha256_fixed.cu)", std::to_string(workers), backend, out.to_host());

    double openssl = best_seconds(reps, [&] { opkit::ops::sha256(data, kLen, digests, {.host_cpu = true}); });
    row("OpenSSL (opkit host path)", std::to_string(omp_get_max_threads()), openssl, digests);

    for (const opkit::Device& gpu : opkit::Device::all("cuda")) {
      auto gin = gpu.alloc<std::uint8_t>(data.size());
      auto gout = gpu.alloc<std::uint8_t>(count * 32);
      gin.copy_from(data);
      opkit::ops::Sha256Kernel gpu_kernel(gpu);
      double seconds = best_seconds(reps, [&] {
        gpu_kernel.fixed(opkit::ops::HashAlgo::sha256, gin, kLen, gout);
        gpu.synchronize();
      });
      row(("GPU " + gpu.info().name + " (sha256_fixed.cu)").c_str(), "-", seconds, gout.to_host());
      break;
    }
    return failures == 0 ? 0 : 1;
  } catch (const opkit::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
