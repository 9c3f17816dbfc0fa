// SHA-256 throughput: the GPU kernels on device-resident messages (full 32-byte digests written
// back to device memory) for 32-, 64- and 1024-byte messages, with a sweep of launch shapes and
// kernel variants for 32 bytes; and the host-CPU path (OpenSSL over all cores). Prints a table.
//
// usage: opkit_sha256_bench [--cubins DIR] [--quick]
//   --cubins DIR  also write each benchmarked GPU program's cubin to DIR (for tools/sass_count.py)
//   --quick       fewer, smaller runs
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "opkit/opkit.hpp"
#include "opkit/ops/sha256.hpp"

namespace {

using opkit::ops::HashAlgo;

struct GpuCase {
  std::size_t len;
  HashAlgo algo;
  unsigned block, per_thread;
  int shift_on_fma;  // SHA256_SHIFT_ON_FMA
};

std::string cubins_dir;
bool quick = false;

std::string case_name(const GpuCase& c) {
  return std::string(opkit::ops::hash_algo_name(c.algo)) + "_L" + std::to_string(c.len) + "_b" +
         std::to_string(c.block) + "_pt" + std::to_string(c.per_thread) + "_shr" + (c.shift_on_fma ? "fma" : "alu");
}

void run_gpu_case(const opkit::Device& gpu, const GpuCase& c) {
  opkit::Program program = opkit::ops::sha256_fixed_program(c.algo, c.len, 16, 16, c.per_thread);
  program.define("SHA256_SHIFT_ON_FMA", c.shift_on_fma);
  if (!cubins_dir.empty()) {
    auto compiled = gpu.build(program);
    std::ofstream(cubins_dir + "/" + case_name(c) + ".cubin", std::ios::binary)
        .write(reinterpret_cast<const char*>(compiled.binary.data()),
               static_cast<std::streamsize>(compiled.binary.size()));
  }
  opkit::Kernel kernel = gpu.compile(program).kernel("sha256_fixed");

  // About 2 GiB of input for short messages, 4 GiB for 1 KiB ones.
  const std::size_t count =
      (quick ? std::size_t{1} << 22 : (c.len >= 1024 ? std::size_t{4} << 30 : std::size_t{2} << 30)) /
      std::max<std::size_t>(c.len, 32);
  auto data = gpu.alloc<std::uint8_t>(count * c.len);
  auto digests = gpu.alloc<std::uint8_t>(count * 32);
  data.fill(0x5a);
  const std::uint64_t per_block = std::uint64_t{c.block} * c.per_thread;
  const opkit::LaunchConfig config{.grid = static_cast<std::uint32_t>((count + per_block - 1) / per_block),
                                   .block = c.block};
  kernel.launch(config, data, digests, static_cast<unsigned long long>(count));  // warm up
  gpu.synchronize();

  opkit::Stream stream = gpu.default_stream();
  opkit::Event start = gpu.create_event(), stop = gpu.create_event();
  const int reps = quick ? 3 : 10;
  float best_ms = 1e30f;
  for (int r = 0; r < reps; ++r) {
    start.record(stream);
    kernel.launch(config, data, digests, static_cast<unsigned long long>(count));
    stop.record(stream);
    stop.synchronize();
    best_ms = std::min(best_ms, opkit::Event::elapsed_ms(start, stop));
  }
  const double hashes_per_s = static_cast<double>(count) / (best_ms * 1e-3);
  std::printf("gpu  %-8s %6zu %6u %4u  %-4s %10.3f %10.2f %9.1f\n", opkit::ops::hash_algo_name(c.algo), c.len, c.block,
              c.per_thread, c.shift_on_fma ? "fma" : "alu", best_ms, hashes_per_s / 1e9,
              hashes_per_s * static_cast<double>(c.len) / 1e9);
  std::fflush(stdout);
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
  std::printf("cpu  %-8s %6zu %6d %4d  %-4s %10.3f %10.4f %9.2f\n", opkit::ops::hash_algo_name(algo), len,
              omp_get_max_threads(), 1, "-", best_s * 1e3, hashes_per_s / 1e9,
              hashes_per_s * static_cast<double>(len) / 1e9);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--cubins" && i + 1 < argc)
      cubins_dir = argv[++i];
    else if (arg == "--quick")
      quick = true;
    else {
      std::fprintf(stderr, "usage: %s [--cubins DIR] [--quick]\n", argv[0]);
      return 2;
    }
  }
  try {
    std::printf("%-4s %-8s %6s %6s %4s  %-4s %10s %10s %9s\n", "dev", "algo", "L", "block", "pt", "shr", "ms", "GH/s",
                "GB/s");
    auto gpus = opkit::Device::cuda_devices();
    if (gpus.empty()) {
      std::printf("# no CUDA GPU: GPU rows skipped\n");
    } else {
      const opkit::Device& gpu = gpus.front();
      std::printf("# %s, %d SMs, peak clock %d MHz\n", gpu.info().name.c_str(), gpu.info().compute_units,
                  gpu.info().clock_khz / 1000);
      // Launch shapes and the shift variant, on the headline case.
      for (int shift_on_fma : {1, 0})
        for (unsigned per_thread : {1u, 2u})
          for (unsigned block : {128u, 256u, 512u})
            run_gpu_case(gpu, {32, HashAlgo::sha256, block, per_thread, shift_on_fma});
      for (std::size_t len : {64, 1024}) run_gpu_case(gpu, {len, HashAlgo::sha256, 256, 1, 1});
      for (std::size_t len : {32, 80}) run_gpu_case(gpu, {len, HashAlgo::sha256d, 256, 1, 1});
    }
    for (std::size_t len : {32, 64, 1024, 16384}) run_cpu_case(len, HashAlgo::sha256);
  } catch (const opkit::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
