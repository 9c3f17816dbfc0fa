// Per-launch overhead of opkit's typed launch against raw cuLaunchKernel in the same process,
// plus NVRTC compile time and module load time from an in-memory cubin. Needs a CUDA GPU.
//
// Method: an empty kernel launched N times back to back on the default stream, host wall time
// per launch after a warm-up, median of several repetitions; then one synchronize. This measures
// the host-side cost of a launch (what a Python or C++ caller pays), not the kernel.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "backend/cuda/driver_api.hpp"
#include "opkit/opkit.hpp"

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kEmpty = R"(extern "C" __global__ void empty(float* p, int n) { if (n < 0) p[0] = 1; })";

template <class F>
double median_us_per_call(F&& call, int calls, int reps) {
  std::vector<double> samples;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) call();
    auto t1 = Clock::now();
    samples.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

int main() try {
  auto gpu = opkit::Device::cuda(0);
  std::printf("device: %s (%s, %s)\n", gpu.info().name.c_str(), gpu.info().arch.c_str(), gpu.info().driver.c_str());

  // Compile and load timings (cold NVRTC compile of a tiny kernel; the first compile in a process
  // also pays NVRTC's own start-up, so it is reported separately).
  auto t0 = Clock::now();
  auto first = opkit::compile(opkit::Program(kEmpty).define("FIRST"), gpu.target());
  auto t1 = Clock::now();
  std::vector<double> compile_ms;
  for (int i = 0; i < 5; ++i) {
    auto a = Clock::now();
    opkit::compile(opkit::Program(kEmpty).define("VARIANT", i), gpu.target());
    compile_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
  }
  std::sort(compile_ms.begin(), compile_ms.end());
  std::vector<double> load_us;
  for (int i = 0; i < 20; ++i) {
    auto a = Clock::now();
    auto module = gpu.load(first);
    load_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
  }
  std::sort(load_us.begin(), load_us.end());

  auto module = gpu.load(first);
  auto kernel = module.kernel("empty");
  auto buffer = gpu.alloc<float>(1);
  const opkit::LaunchConfig config{.grid = 1, .block = 32};

  // Raw driver launch of the same function, same process, same stream.
  const auto& api = *opkit::cuda::driver_api();
  opkit::cuda::CUmodule raw_module = nullptr;
  opkit::cuda::CUfunction raw_function = nullptr;
  api.cuModuleLoadData(&raw_module, first.binary.data());
  api.cuModuleGetFunction(&raw_function, raw_module, "empty");
  float* raw_ptr = buffer.data();
  int raw_n = 1;
  void* raw_args[] = {&raw_ptr, &raw_n};
  auto raw_launch = [&] { api.cuLaunchKernel(raw_function, 1, 1, 1, 32, 1, 1, 0, nullptr, raw_args, nullptr); };
  auto typed_launch = [&] { kernel.launch(config, buffer, 1); };

  // Host cost: bursts short enough that the GPU's launch queue never fills (so a launch never
  // waits for the GPU), synchronizing between bursts outside the timed region.
  auto burst_us = [&](auto&& launch) {
    std::vector<double> samples;
    for (int r = 0; r < 200; ++r) {
      auto a = Clock::now();
      for (int i = 0; i < 128; ++i) launch();
      samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count() / 128);
      gpu.synchronize();
    }
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
  };
  opkit::cuda::CUcontext ctx = nullptr;
  double get_current_us = median_us_per_call([&] { api.cuCtxGetCurrent(&ctx); }, 100000, 5);
  std::vector<double> raw_burst, typed_burst;
  for (int round = 0; round < 3; ++round) {
    raw_burst.push_back(burst_us(raw_launch));
    typed_burst.push_back(burst_us(typed_launch));
  }
  std::sort(raw_burst.begin(), raw_burst.end());
  std::sort(typed_burst.begin(), typed_burst.end());

  constexpr int calls = 20000, reps = 9;
  for (int i = 0; i < 2000; ++i) raw_launch(), typed_launch();
  gpu.synchronize();
  // Interleave the two so that clock drift affects both alike.
  std::vector<double> raw, typed;
  for (int round = 0; round < 3; ++round) {
    raw.push_back(median_us_per_call(raw_launch, calls, reps));
    gpu.synchronize();
    typed.push_back(median_us_per_call(typed_launch, calls, reps));
    gpu.synchronize();
  }
  std::sort(raw.begin(), raw.end());
  std::sort(typed.begin(), typed.end());
  double raw_us = raw[1], typed_us = typed[1];
  api.cuModuleUnload(raw_module);

  std::printf("\n| measure | value |\n|---|---|\n");
  std::printf("| first NVRTC compile in process (tiny kernel) | %.1f ms |\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count());
  std::printf("| NVRTC compile, later (median of 5) | %.1f ms |\n", compile_ms[2]);
  std::printf("| module load from in-memory cubin (median of 20) | %.1f us |\n", load_us[10]);
  std::printf("| host cost per launch, raw cuLaunchKernel (bursts of 128) | %.2f us |\n", raw_burst[1]);
  std::printf("| host cost per launch, opkit Kernel::launch (bursts of 128) | %.2f us |\n", typed_burst[1]);
  std::printf("| opkit / raw, host cost | %.3f |\n", typed_burst[1] / raw_burst[1]);
  std::printf("| sustained, raw cuLaunchKernel (20000 back to back) | %.2f us |\n", raw_us);
  std::printf("| sustained, opkit Kernel::launch (20000 back to back) | %.2f us |\n", typed_us);
  std::printf("| opkit / raw, sustained | %.3f |\n", typed_us / raw_us);
  std::printf("| cuCtxGetCurrent (part of every opkit launch) | %.3f us |\n", get_current_us);
  return 0;
} catch (const opkit::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return e.kind() == opkit::Errc::unavailable ? 77 : 1;
}
