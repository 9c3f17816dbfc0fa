// Time from a Program to a launchable Kernel: a cold compile (NVRTC, or the host compiler on the
// CPU backend) against an on-disk cache hit, for a tiny kernel and the SHA-256 kernel. Goal: a
// GPU cache hit under 2 ms.
//
// Method: each sample builds a distinct Program (a salt -D makes every cold sample a real miss),
// then the same Programs again in the same order for the hits. A sample is Device::build (cache
// key + disk read + integrity check + deserialize, or compile + store) + Device::load (module load)
// + Module::kernel (symbol lookup). Device::build has no in-process table, so every hit reads the
// disk, as a new process would. The cache lives in a fresh temporary directory. Without a GPU,
// the GPU rows time the disk hit alone (key + KernelCache::load, no module load) against
// opkit::compile for Target::cuda("sm_90"), and say so.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "opkit/opkit.hpp"
#include "opkit/ops/sha256.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Subject {
  std::string label;
  std::function<opkit::Program(int salt)> program;
  std::string kernel;
};

std::vector<Subject> subjects() {
  std::vector<Subject> out;
  out.push_back({"tiny kernel (tutorial)",
                 [](int salt) {
                   return opkit::Program(
                              "__global__ void test_kernel(float* a) { a[threadIdx.x] = 2.0f * threadIdx.x; }")
                       .name("tutorial.cu")
                       .define("OPKIT_BENCH_SALT", salt);
                 },
                 "test_kernel"});
  // The library's own Program for 64-byte messages (default alignments), salted per round.
  out.push_back({"SHA-256 fixed-length kernel (64-byte messages)",
                 [](int salt) {
                   return opkit::ops::sha256_fixed_program(opkit::ops::HashAlgo::sha256, 64, 1, 1, 1)
                       .define("OPKIT_BENCH_SALT", salt);
                 },
                 "sha256_fixed"});
  return out;
}

struct Row {
  std::string device, subject, hit_what;
  double cold_ms, hit_ms;
  int samples;
};

// Program -> launchable Kernel on a device, cold then hit.
Row bench_device(const opkit::Device& device, const Subject& subject, int samples, int salt_base) {
  std::vector<double> cold, hit;
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < samples; ++i) {
      opkit::Program program = subject.program(salt_base + i);
      auto start = Clock::now();
      opkit::CompiledProgram compiled = device.build(program);
      opkit::Module module = device.load(compiled);
      opkit::Kernel kernel = module.kernel(subject.kernel);
      (pass == 0 ? cold : hit).push_back(ms_since(start));
    }
  std::string label = device.backend() + " (" + device.info().name + ")";
  return {label, subject.label, "build + load + kernel", median(cold), median(hit), samples};
}

// No GPU: NVRTC compile + store against key + disk read, as Device::build does for an sm_90 GPU.
Row bench_disk_only(const Subject& subject, int samples, int salt_base) {
  opkit::KernelCache& cache = opkit::KernelCache::global();
  std::vector<double> cold, hit;
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < samples; ++i) {
      opkit::Program program = subject.program(salt_base + i);
      auto start = Clock::now();
      std::string key = opkit::cache_key(program, opkit::Target::cuda("sm_90"));
      if (pass == 0) {
        cache.store(key, opkit::compile(program, opkit::Target::cuda("sm_90")));
        cold.push_back(ms_since(start));
      } else {
        auto entry = cache.load(key);
        hit.push_back(ms_since(start));
        if (!entry) std::fprintf(stderr, "warning: expected a cache hit for sample %d\n", i);
      }
    }
  return {"sm_90 via NVRTC, no GPU",
          subject.label,
          "key + disk read only (no GPU to load on)",
          median(cold),
          median(hit),
          samples};
}

}  // namespace

int main() try {
  // A private, empty cache for this run; KernelCache::global() reads the environment once, here.
  std::string dir_template = (std::filesystem::temp_directory_path() / "opkit-cache-bench.XXXXXX").string();
  if (::mkdtemp(dir_template.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::filesystem::path dir = dir_template;
  ::setenv("OPKIT_CACHE_DIR", (dir / "cache").c_str(), 1);
  ::setenv("OPKIT_CACHE", "1", 1);
  if (!opkit::KernelCache::global().enabled()) {
    std::fprintf(stderr, "the cache is disabled: %s\n", opkit::KernelCache::global().last_error().c_str());
    return 1;
  }
  const int salt_base = static_cast<int>(std::random_device{}() % 1000000) * 100;

  std::vector<Row> rows;
  auto gpus = opkit::Device::all("cuda");
  for (const auto& subject : subjects()) {
    if (!gpus.empty()) {
      rows.push_back(bench_device(gpus.front(), subject, 7, salt_base));
    } else if (opkit::nvrtc::info().available) {
      rows.push_back(bench_disk_only(subject, 7, salt_base));
    }
    if (!opkit::Device::all("cpu").empty()) rows.push_back(bench_device(opkit::Device::cpu(), subject, 3, salt_base));
  }
  if (gpus.empty())
    std::printf("note: no CUDA GPU (%s): the NVRTC rows time the disk hit only, without a module load\n",
                opkit::backends().front().reason.c_str());

  std::printf(
      "\n| device | kernel | what a hit includes | cold compile (ms) | cache hit (ms) | speed-up | samples |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  bool gpu_goal_met = true;
  for (const auto& r : rows) {
    std::printf("| %s | %s | %s | %.1f | %.3f | %.0fx | %d |\n", r.device.c_str(), r.subject.c_str(),
                r.hit_what.c_str(), r.cold_ms, r.hit_ms, r.cold_ms / std::max(r.hit_ms, 1e-6), r.samples);
    if (r.device.rfind("cuda", 0) == 0 && r.hit_ms >= 2.0) gpu_goal_met = false;
  }
  if (!gpus.empty()) std::printf("\ngoal (GPU cache hit under 2 ms): %s\n", gpu_goal_met ? "met" : "NOT met");
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
} catch (const opkit::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
